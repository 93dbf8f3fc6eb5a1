//! How far a query has read: every byte DataFusion asks of the export's files goes through
//! [`CountingStore`], which counts it, so that `fleet` can say how much of the Parquet a long
//! scan has read ("read 1.2 GiB of 3.4 GiB") and, when done, what the query cost.

use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::object_store::path::Path;
use datafusion::object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore, PutMultipartOptions,
    PutOptions, PutPayload, PutResult, Result,
};
use futures::stream::BoxStream;

/// The local file system, counting the bytes read from it.
#[derive(Debug)]
pub struct CountingStore {
    inner: Arc<dyn ObjectStore>,
    read: Arc<AtomicU64>,
}

impl CountingStore {
    /// `inner`, its reads added to `read`.
    pub fn new(inner: Arc<dyn ObjectStore>, read: Arc<AtomicU64>) -> CountingStore {
        CountingStore { inner, read }
    }

    fn count(&self, bytes: u64) {
        self.read.fetch_add(bytes, Ordering::Relaxed);
    }
}

impl fmt::Display for CountingStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "counting reads of {}", self.inner)
    }
}

#[async_trait]
impl ObjectStore for CountingStore {
    async fn put_opts(&self, location: &Path, payload: PutPayload, opts: PutOptions) -> Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(&self, location: &Path, opts: PutMultipartOptions) -> Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        let head = options.head;
        let got = self.inner.get_opts(location, options).await?;
        if !head {
            self.count(got.range.end.saturating_sub(got.range.start));
        }
        Ok(got)
    }

    async fn get_ranges(&self, location: &Path, ranges: &[Range<u64>]) -> Result<Vec<bytes::Bytes>> {
        let got = self.inner.get_ranges(location, ranges).await?;
        self.count(got.iter().map(|b| b.len() as u64).sum());
        Ok(got)
    }

    fn delete_stream(&self, locations: BoxStream<'static, Result<Path>>) -> BoxStream<'static, Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    fn list_with_offset(&self, prefix: Option<&Path>, offset: &Path) -> BoxStream<'static, Result<ObjectMeta>> {
        self.inner.list_with_offset(prefix, offset)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::object_store::local::LocalFileSystem;
    use datafusion::object_store::ObjectStoreExt;

    #[test]
    fn reads_are_counted_and_heads_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.parquet");
        std::fs::write(&file, vec![7u8; 10_000]).unwrap();
        let read = Arc::new(AtomicU64::new(0));
        let store = CountingStore::new(Arc::new(LocalFileSystem::new()), Arc::clone(&read));
        let path = Path::from_absolute_path(&file).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        runtime.block_on(async {
            store.head(&path).await.unwrap();
            assert_eq!(read.load(Ordering::Relaxed), 0);
            assert_eq!(store.get_range(&path, 100..1_100).await.unwrap().len(), 1_000);
            assert_eq!(read.load(Ordering::Relaxed), 1_000);
            store.get_ranges(&path, &[0..10, 9_990..10_000]).await.unwrap();
            assert_eq!(read.load(Ordering::Relaxed), 1_020);
            store.get(&path).await.unwrap().bytes().await.unwrap();
            assert_eq!(read.load(Ordering::Relaxed), 11_020);
        });
    }
}
