//! A section file's download: `GET /drives/{d}/items/{i}/content` answers `302 Found` to a
//! pre-authenticated URL, valid a few minutes, that needs no `Authorization` header (Microsoft's
//! "Download driveItem content", <https://learn.microsoft.com/en-us/graph/api/driveitem-get-content>).
//! The client follows it by hand without the bearer token, streams the body to `<dest>.part`
//! chunk by chunk, checks it against the length the download itself announces (never the listed
//! size) and the drive's hash of the file, and renames it to `dest` once whole. A cut
//! transfer, or a `.part` a killed run left, goes on with `Range: bytes=N-` (a `206` whose
//! `Content-Range` continues the file; a `200` is the whole file again, written from its start).

use std::path::{Path, PathBuf};

use futures::StreamExt;
use reqwest::header::{CONTENT_RANGE, LOCATION, RANGE};
use tokio::io::AsyncWriteExt;

use super::pacer::Slot;
use super::{enc, said, Attempt, DriveClient, DriveError, Said, SectionFile};
use crate::graph::{transport_detail, Caller};
use crate::net::Service;

/// The largest OneNote file the service serves: SharePoint and OneDrive keep OneNote files to
/// 2 GB, and the download of a bigger one answers 503 however often it is asked (see
/// `docs/GRAPH-DRIVE.md`).
pub const MAX_DOWNLOAD: u64 = 2 * 1024 * 1024 * 1024;
/// Redirects followed from one download URL.
const MAX_HOPS: u32 = 5;

/// What one request to a download URL came to.
enum Fetched {
    /// 200 or 206: the body to stream.
    Body(reqwest::Response, Slot),
    /// A redirect to this URL (followed without the token).
    Moved(String),
    /// The URL no longer serves the file (expired, or refused): ask Graph for a new one.
    Expired,
    /// 416: nothing is there from the partial file's length on; the file's length, when the
    /// answer's `Content-Range: bytes */N` gives it.
    Unsatisfiable(Option<u64>),
    /// Send it again (after a throttle's wait, a pause, the network's wait).
    Again,
}

/// How a streamed body ended.
enum Streamed {
    /// The file is whole, this long.
    Whole(u64),
    /// The body ended after this many bytes of the file, short of what was announced.
    Short(u64),
    /// The connection was cut or went quiet.
    Cut(String),
    /// More bytes came than the answer announced.
    Long,
}

impl DriveClient {
    /// Streams `file` to `dest`, resuming a partial file there (`<dest>.part`); returns its size.
    /// The file's length is the download's own (its `Content-Length`, or the total of its
    /// `Content-Range`), never the listed size, which OneDrive gives wrong for OneNote files (field
    /// report: OneDrive/onedrive-api-docs#927, 170 bytes listed, 10,116,025 downloaded); a whole
    /// download is checked against the drive's hash of the file where the listing gave one. A
    /// file at `dest` is whole (a download is moved there only once whole), so the caller names
    /// `dest` by the item and its `cTag`. Files under `dest` are the caller's to remove.
    pub async fn download(
        &self,
        who: &Caller,
        file: &SectionFile,
        dest: &Path,
    ) -> Result<u64, DriveError> {
        let what = format!("section file {}", file.path.join("/"));
        let too_large = |size: u64| DriveError::TooLarge {
            account: who.account.clone(),
            what: what.clone(),
            size,
            max: MAX_DOWNLOAD,
        };
        if file.size > MAX_DOWNLOAD {
            return Err(too_large(file.size));
        }
        if let Some(len) = file_len(dest).await? {
            return Ok(len);
        }
        if let Some(dir) = dest.parent().filter(|d| !d.as_os_str().is_empty()) {
            tokio::fs::create_dir_all(dir)
                .await
                .map_err(io(dir, "creating the download folder"))?;
        }
        let part = part_path(dest);
        let content = format!(
            "{}/drives/{}/items/{}/content",
            self.base,
            enc(&file.drive_id),
            enc(&file.item_id)
        );
        let mut a = self.attempt(who, &what, &content).await?;
        let mut location: Option<String> = None;
        let mut hops = 0u32;
        // The file's length as the download host reports it, once it has.
        let mut size: Option<u64> = None;
        loop {
            let mut have = file_len(&part).await?.unwrap_or(0);
            if have > MAX_DOWNLOAD || size.is_some_and(|s| have > s) {
                truncate(&part).await?;
                have = 0;
            }
            if size == Some(have) {
                match self.checked(&mut a, file, &part, dest, have).await? {
                    Some(n) => return Ok(n),
                    None => continue,
                }
            }
            let (resp, slot) = match location.clone() {
                None => {
                    let Some((resp, slot)) = self.graph_get(&mut a, &content).await? else {
                        continue;
                    };
                    if said(resp.status().as_u16(), a.refreshed) == Said::Redirect {
                        location = Some(self.location(&a, &content, &resp)?);
                        hops = 0;
                        continue;
                    }
                    // Graph sent the file itself: no range was asked for, so it is all of it.
                    (resp, slot)
                }
                Some(url) => match self.fetch(&mut a, &url, have).await? {
                    Fetched::Body(resp, slot) => (resp, slot),
                    Fetched::Moved(next) => {
                        hops += 1;
                        if hops > MAX_HOPS {
                            return Err(DriveError::BadAnswer {
                                account: who.account.clone(),
                                what,
                                problem: format!("more than {MAX_HOPS} redirects"),
                            });
                        }
                        location = Some(next);
                        continue;
                    }
                    Fetched::Expired => {
                        location = None;
                        continue;
                    }
                    Fetched::Unsatisfiable(total) => {
                        // Nothing after the bytes here: the partial file is whole when the host
                        // says the file is that long.
                        if have > 0 && total == Some(have) {
                            size = Some(have);
                            continue;
                        }
                        truncate(&part).await?;
                        self.again(&mut a, "HTTP 416 to the rest of a partial file")
                            .await?;
                        continue;
                    }
                    Fetched::Again => continue,
                },
            };
            let offset = match resp.status().as_u16() {
                206 => {
                    let range = resp
                        .headers()
                        .get(CONTENT_RANGE)
                        .and_then(|v| v.to_str().ok())
                        .and_then(content_range);
                    match range {
                        Some((first, last, total)) if first == have && last + 1 == total => {
                            size = Some(total);
                        }
                        Some(_) | None => {
                            drop(slot);
                            truncate(&part).await?;
                            self.again(&mut a, "a Content-Range that does not continue the file")
                                .await?;
                            continue;
                        }
                    }
                    self.stats
                        .resumed
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    have
                }
                // The whole file, whatever was asked: written from its start; its length is the
                // answer's (none: chunked, read to its end).
                _ => {
                    size = resp.content_length();
                    0
                }
            };
            if let Some(s) = size.filter(|s| *s > MAX_DOWNLOAD) {
                return Err(too_large(s));
            }
            let streamed = self.stream(resp, &part, offset, size).await?;
            drop(slot);
            match streamed {
                Streamed::Whole(n) => {
                    size = Some(n);
                    if let Some(n) = self.checked(&mut a, file, &part, dest, n).await? {
                        return Ok(n);
                    }
                }
                Streamed::Short(n) => {
                    let of = size.map_or_else(|| "?".to_owned(), |s| s.to_string());
                    let last = format!("the transfer ended at {n} of {of} bytes");
                    self.again(&mut a, &last).await?;
                }
                Streamed::Cut(detail) => self.again(&mut a, &detail).await?,
                Streamed::Long => {
                    truncate(&part).await?;
                    size = None;
                    self.again(&mut a, "more bytes than the download announced")
                        .await?;
                }
            }
        }
    }

    /// A whole download at `part` checked against the drive's hash where the listing gave one,
    /// then moved to `dest`: `None` when it does not match (the partial file is emptied and a retry
    /// spent: the next attempt downloads it again).
    async fn checked(
        &self,
        a: &mut Attempt<'_>,
        file: &SectionFile,
        part: &Path,
        dest: &Path,
        len: u64,
    ) -> Result<Option<u64>, DriveError> {
        if file_len(part).await?.is_none() {
            // An empty file: nothing was streamed, so nothing created it.
            tokio::fs::File::create(part)
                .await
                .map_err(io(part, "creating the file"))?;
        }
        if let Some(hash) = &file.hash {
            let ok = hash
                .matches(part)
                .await
                .map_err(io(part, "reading the download to check its hash"))?;
            if !ok {
                truncate(part).await?;
                let last = format!("the download's {} is not the drive's", hash.name());
                self.again(a, &last).await?;
                return Ok(None);
            }
        }
        finish(part, dest, len).await.map(Some)
    }

    /// One request to a pre-authenticated download URL: never with the bearer token, with
    /// `Range` when part of the file is here already.
    async fn fetch(
        &self,
        a: &mut Attempt<'_>,
        url: &str,
        have: u64,
    ) -> Result<Fetched, DriveError> {
        let slot = self.pacer.admit(a.who).await?;
        let mut req = self.http.get(url);
        if have > 0 {
            req = req.header(RANGE, format!("bytes={have}-"));
        }
        let sent = crate::trace::send(req, "drive").await;
        self.stats
            .downloads
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let resp = match sent {
            Ok(r) => r,
            Err(e) => {
                drop(slot);
                self.not_sent(a, &e).await?;
                return Ok(Fetched::Again);
            }
        };
        self.reach.answered(Service::Graph);
        let status = resp.status().as_u16();
        if status == 416 {
            self.pacer.answered(a.who, &slot).await?;
            let total = resp
                .headers()
                .get(CONTENT_RANGE)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().strip_prefix("bytes */"))
                .and_then(|n| n.trim().parse().ok());
            return Ok(Fetched::Unsatisfiable(total));
        }
        // The URL carries its own authorisation: a 401 is the URL's, never the token's.
        match said(status, true) {
            Said::Ok => {
                self.pacer.answered(a.who, &slot).await?;
                Ok(Fetched::Body(resp, slot))
            }
            Said::Redirect => {
                self.pacer.answered(a.who, &slot).await?;
                Ok(Fetched::Moved(self.location(a, url, &resp)?))
            }
            Said::Throttled => {
                self.throttle(a, slot, status, resp.headers()).await?;
                Ok(Fetched::Again)
            }
            Said::Unauthorized | Said::Forbidden | Said::NotFound => {
                self.pacer.answered(a.who, &slot).await?;
                drop(slot);
                self.again(a, &format!("the download URL answered {status}"))
                    .await?;
                Ok(Fetched::Expired)
            }
            Said::Transient => {
                drop(slot);
                self.again(a, &format!("HTTP {status}")).await?;
                Ok(Fetched::Again)
            }
            Said::Refused => {
                self.pacer.answered(a.who, &slot).await?;
                drop(slot);
                Err(self.refused(a, status, resp).await)
            }
        }
    }

    /// The redirect's target, resolved against the URL asked for; only HTTP(S).
    fn location(
        &self,
        a: &Attempt<'_>,
        from: &str,
        resp: &reqwest::Response,
    ) -> Result<String, DriveError> {
        let bad = |problem: &str| DriveError::BadAnswer {
            account: a.who.account.clone(),
            what: a.what.to_owned(),
            problem: problem.to_owned(),
        };
        let target = resp
            .headers()
            .get(LOCATION)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| bad("a redirect without a Location"))?;
        let url = url::Url::parse(from)
            .and_then(|base| base.join(target))
            .map_err(|_| bad("a redirect to an unreadable Location"))?;
        if !matches!(url.scheme(), "https" | "http") {
            return Err(bad("a redirect to a Location that is not HTTP(S)"));
        }
        Ok(url.into())
    }

    /// Writes `resp`'s body to `part` from `offset` on, chunk by chunk (never the whole file in
    /// memory), stopping at the first byte past `size` (the file's length as the answer announced
    /// it; `None`: read to the body's end).
    async fn stream(
        &self,
        resp: reqwest::Response,
        part: &Path,
        offset: u64,
        size: Option<u64>,
    ) -> Result<Streamed, DriveError> {
        let mut open = tokio::fs::OpenOptions::new();
        open.create(true);
        if offset == 0 {
            open.write(true).truncate(true);
        } else {
            open.append(true);
        }
        let mut f = crate::platform::open_private_tokio(&open, part)
            .await
            .map_err(io(part, "opening the partial file"))?;
        let mut written = offset;
        let mut body = resp.bytes_stream();
        let ended = loop {
            let Some(chunk) = body.next().await else {
                break match size {
                    Some(s) if written < s => Streamed::Short(written),
                    Some(_) | None => Streamed::Whole(written),
                };
            };
            let chunk = match chunk {
                Ok(c) => c,
                Err(e) => {
                    break Streamed::Cut(format!("transfer cut off ({})", transport_detail(&e)))
                }
            };
            if size.is_some_and(|s| written + chunk.len() as u64 > s)
                || written + chunk.len() as u64 > MAX_DOWNLOAD
            {
                break Streamed::Long;
            }
            f.write_all(&chunk)
                .await
                .map_err(io(part, "writing the partial file"))?;
            crate::crash::point("drive.chunk_written");
            written += chunk.len() as u64;
            self.stats
                .bytes
                .fetch_add(chunk.len() as u64, std::sync::atomic::Ordering::Relaxed);
        };
        // What arrived is kept for the next range request, so it must be on disk.
        f.flush()
            .await
            .map_err(io(part, "writing the partial file"))?;
        f.sync_data()
            .await
            .map_err(io(part, "writing the partial file"))?;
        Ok(ended)
    }
}

/// Where a download in progress is kept: `dest` with `.part` added to its name.
pub fn part_path(dest: &Path) -> PathBuf {
    let mut name = dest.as_os_str().to_owned();
    name.push(".part");
    PathBuf::from(name)
}

/// `(first, last, total)` of a `Content-Range: bytes first-last/total` (`None` for any other form,
/// `*` totals included).
fn content_range(v: &str) -> Option<(u64, u64, u64)> {
    let rest = v.trim().strip_prefix("bytes ")?;
    let (range, total) = rest.split_once('/')?;
    let (first, last) = range.split_once('-')?;
    Some((
        first.trim().parse().ok()?,
        last.trim().parse().ok()?,
        total.trim().parse().ok()?,
    ))
}

async fn file_len(path: &Path) -> Result<Option<u64>, DriveError> {
    match tokio::fs::metadata(path).await {
        Ok(m) if m.is_file() => Ok(Some(m.len())),
        Ok(_) => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(path, "reading the file's size")(e)),
    }
}

async fn truncate(part: &Path) -> Result<(), DriveError> {
    match tokio::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(part)
        .await
    {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io(part, "emptying the partial file")(e)),
    }
}

/// The whole file at `part` becomes `dest`.
async fn finish(part: &Path, dest: &Path, size: u64) -> Result<u64, DriveError> {
    tokio::fs::rename(part, dest)
        .await
        .map_err(io(dest, "moving the finished download into place"))?;
    crate::crash::point("drive.file_in_place");
    Ok(size)
}

fn io(path: &Path, action: &'static str) -> impl Fn(std::io::Error) -> DriveError {
    let path = path.to_owned();
    move |source| DriveError::File {
        path: path.clone(),
        action,
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_ranges_are_read_exactly() {
        assert_eq!(content_range("bytes 100-199/200"), Some((100, 199, 200)));
        assert_eq!(content_range("bytes 0-0/1"), Some((0, 0, 1)));
        assert_eq!(content_range("bytes 100-199/*"), None);
        assert_eq!(content_range("bytes */200"), None);
        assert_eq!(content_range("items 1-2/3"), None);
    }

    #[test]
    fn the_partial_file_sits_beside_the_destination() {
        assert_eq!(
            part_path(Path::new("/s/d/abc.one")),
            PathBuf::from("/s/d/abc.one.part")
        );
    }
}
