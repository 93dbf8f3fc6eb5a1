//! Chip presets (TPU configs, GPUs) and the roofline time model. Filled in by the inputs work (issue 5).
