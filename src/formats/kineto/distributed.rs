//! Kineto's top-level `distributedInfo` (rank, world size, `pg_config`) into the model's
//! [`DistributedInfo`].

use serde::Deserialize;

use trace::{DistributedInfo, PgConfig};

/// Reads `distributedInfo`'s JSON text. A value of another shape (or with keys of other types)
/// reads as `None`: the rank then comes from the file name, and a note says why.
pub fn parse_distributed_info(text: &str) -> Option<DistributedInfo> {
    #[derive(Deserialize)]
    struct Lenient {
        #[serde(default)]
        backend: Option<String>,
        #[serde(default)]
        rank: Option<u32>,
        #[serde(default)]
        world_size: Option<u32>,
        #[serde(default)]
        pg_config: Option<serde_json::Value>,
        #[serde(default)]
        nccl_version: Option<serde_json::Value>,
    }
    let l: Lenient = serde_json::from_str(text).ok()?;
    // pg_config entries of an unexpected shape are skipped one by one, not the whole value.
    let pg_config = match l.pg_config {
        Some(serde_json::Value::Array(items)) => {
            items.into_iter().filter_map(|v| serde_json::from_value::<PgConfig>(v).ok()).collect()
        }
        _ => Vec::new(),
    };
    let nccl_version = l.nccl_version.map(|v| match v {
        serde_json::Value::String(s) => s,
        other => other.to_string(),
    });
    Some(DistributedInfo { backend: l.backend, rank: l.rank, world_size: l.world_size, pg_config, nccl_version })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_real_distributed_info_forms() {
        let old = parse_distributed_info(r#"{"backend": "nccl", "rank": 1, "world_size": 128}"#).unwrap();
        assert_eq!((old.rank, old.world_size, old.pg_config.len()), (Some(1), Some(128), 0));
        let new = parse_distributed_info(
            r#"{"backend": "nccl", "rank": 0, "world_size": 2, "pg_count": 1, "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "pg_size": 2, "ranks": [0, 1]}, {"oops": 1}], "nccl_version": "2.17.1"}"#,
        )
        .unwrap();
        assert_eq!(new.pg_config.len(), 1);
        assert_eq!(new.pg_config[0].ranks, vec![0, 1]);
        assert_eq!(new.nccl_version.as_deref(), Some("2.17.1"));
        assert_eq!(parse_distributed_info("[1, 2]"), None);
        assert_eq!(parse_distributed_info(r#"{"rank": -1}"#), None);
    }
}
