//! Drawings as pure geometry and text, so that what the page shows is tested natively and
//! exported byte for byte: [`chart`], bar charts as standalone SVG; [`layout`], a layered
//! drawing of any DAG; [`group_graph`], the fusion groups as that DAG.

pub mod chart;
pub mod group_graph;
pub mod layout;
pub mod roofline;
pub mod text;
