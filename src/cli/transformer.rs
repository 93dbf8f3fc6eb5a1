//! `fusionscope transformer --seq-len S --hidden H --heads N [--dtype-bytes B] [--json [--details]]`

use fusion::analyse;
use fusion::transformer::{transformer_block, TransformerConfig};

use super::graph::{print_report, ReportOutput};
use super::io::CliResult;

#[derive(clap::Args)]
pub struct Args {
    /// Sequence length S
    #[arg(long)]
    pub seq_len: u64,
    /// Hidden dimension H (a multiple of --heads)
    #[arg(long)]
    pub hidden: u64,
    /// Number of attention heads NH
    #[arg(long)]
    pub heads: u64,
    /// Bytes per element
    #[arg(long, default_value_t = 2)]
    pub dtype_bytes: u64,
    #[command(flatten)]
    pub output: ReportOutput,
}

pub fn run(args: Args) -> CliResult {
    let config = TransformerConfig {
        seq_len: args.seq_len,
        hidden_dim: args.hidden,
        num_heads: args.heads,
        dtype_bytes: args.dtype_bytes,
    };
    let graph = transformer_block(config)?;
    let analysis = analyse(&graph);
    let title = format!(
        "transformer block (S={}, H={}, NH={}, {} bytes/element): ",
        config.seq_len, config.hidden_dim, config.num_heads, config.dtype_bytes
    );
    print_report(analysis.view(&graph), &args.output, &title)
}
