//! The synthetic job the page's end-to-end test drops (`tests/e2e/ranks.test.mjs`): four rank
//! files, written by `analysis::ranks::synthetic::SyntheticJob::small` and kept in
//! `tests/data/multirank/synthetic_small/`. This test fails when the generator and the files
//! part; `FUSIONSCOPE_WRITE_SYNTHETIC=1 cargo test --test integration ranks_page_data` writes them again.

use fusionscope::analysis::ranks::synthetic::SyntheticJob;

#[test]
fn the_synthetic_rank_files_are_the_generator_s() {
    let job = SyntheticJob::small();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/multirank/synthetic_small");
    let write = std::env::var_os("FUSIONSCOPE_WRITE_SYNTHETIC").is_some();
    for r in 0..job.world_size {
        let path = dir.join(format!("synthetic_rank{r}.json"));
        let text = job.rank_trace(r);
        if write {
            std::fs::write(&path, &text).unwrap();
        }
        let kept = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(kept == text, "{} differs from SyntheticJob::small().rank_trace({r}): write it again", path.display());
    }
}
