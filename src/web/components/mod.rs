//! The page's components, one per file.

pub mod data_table;
pub mod exports;
pub mod file_open;
pub mod group_view;
pub mod groups_table;
pub mod read_progress;
pub mod share_link;
pub mod summary;
pub mod trace_list;
pub mod trace_panel;
pub mod traffic_chart;
pub mod transformer_form;
