"""The shared traces the fleet tests export (tests/data; their sources in tests/data/PROVENANCE.md):
a BERT and a Qwen model, each on an H100 and an MI300X, and two ranks of a 128-rank job."""

from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
BERT = [
    DATA / "traces/nvidia/hf_bert-small_eager_h100.json.gz",
    DATA / "traces/amd/hf_bert-small_eager_mi300x.json.gz",
]
QWEN = [
    DATA / "traces/nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz",
    DATA / "traces/amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz",
]
RANKS = [
    DATA / "multirank/hta_sampled_128rank_rank0.json.gz",
    DATA / "multirank/hta_sampled_128rank_rank1.json.gz",
]
