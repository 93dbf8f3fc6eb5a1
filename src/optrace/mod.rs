//! Op traces in the optrace text form and the Nova-style case view. Filled in by the inputs work (issue 5).
