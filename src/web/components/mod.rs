//! The page's components, one per file.

pub mod calibration_panel;
pub mod chip_picker;
pub mod data_table;
pub mod download_button;
pub mod exports;
pub mod file_open;
pub mod fusion_dag_view;
pub mod graph_inputs;
pub mod group_view;
pub mod groups_table;
pub mod model_form;
pub mod number_input;
pub mod optrace_panel;
pub mod plain_table;
pub mod ranks_panel;
pub mod read_progress;
pub mod results;
pub mod rules_view;
pub mod share_link;
pub mod sim_panel;
pub mod summary;
pub mod time_panel;
pub mod trace_list;
pub mod trace_panel;
pub mod traffic_chart;
pub mod transformer_form;
