//! `fusionscope transformer --seq-len S --hidden H --heads N [--dtype-bytes B] [--json]`

use fusionscope::fusion::transformer::{transformer_block, TransformerConfig};
use fusionscope::fusion::{analyze, summary};

use super::io::{print, print_json, CliResult, Output};

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
    pub output: Output,
}

pub fn run(args: Args) -> CliResult {
    let config = TransformerConfig {
        seq_len: args.seq_len,
        hidden_dim: args.hidden,
        num_heads: args.heads,
        dtype_bytes: args.dtype_bytes,
    };
    let graph = transformer_block(config)?;
    let report = analyze(&graph).report(&graph);
    if args.output.json {
        print_json(&report)
    } else {
        print(&format!(
            "transformer block (S={}, H={}, NH={}, {} bytes/element): {}",
            config.seq_len,
            config.hidden_dim,
            config.num_heads,
            config.dtype_bytes,
            summary::text_report(&report)
        ))
    }
}
