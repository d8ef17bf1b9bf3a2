//! `$batch`: up to 20 GETs in one round trip. It saves round trips, not budget: every inner request
//! is one request for every window and cap, so a batch never holds more inner requests than the
//! limiter granted slots for. Every inner response is read; the ones that failed (429, 5xx, a missing
//! answer) are retried on their own in a later batch until they succeed or fail for good. An outer 200
//! says nothing about its contents.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use base64::Engine;
use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{json, Value};

use super::{answered, gave_up, percentage, refused, Caller, Failed, GraphClient, GraphError};
use crate::failure::{pause, Retries};
use crate::limiter::Permit;

/// Graph's limit of inner requests per batch.
pub const MAX_BATCH: usize = 20;
/// Throttled answers tolerated for one request (the limiter paces every retry).
const MAX_OUTER_THROTTLES: u32 = 60;

/// One GET to run in a batch.
#[derive(Clone, Debug)]
pub struct BatchGet {
    /// URL, absolute or relative to the Graph base.
    pub url: String,
    /// The OneNote item it reads, for messages.
    pub item: String,
}

impl GraphClient {
    /// Runs `gets` through `$batch` and returns one result per get, in the same order. Nothing is
    /// dropped: every get ends in its body or its own error. The outer error is for what ends the
    /// whole call: sign-in is needed, or the limiter cannot grant before the deadline.
    pub async fn batch_get(
        &self,
        who: &Caller,
        gets: &[BatchGet],
    ) -> Result<Vec<Result<Bytes, GraphError>>, GraphError> {
        self.batch_get_with(who, gets, false).await
    }

    /// [`GraphClient::batch_get`], where a get that times out (504) gives up at once: the caller
    /// asks again with a lighter request (a listing in smaller slices).
    pub async fn batch_get_stepping(
        &self,
        who: &Caller,
        gets: &[BatchGet],
    ) -> Result<Vec<Result<Bytes, GraphError>>, GraphError> {
        self.batch_get_with(who, gets, true).await
    }

    /// Each get spends its retries from its own count, or from the caller's item count when it
    /// has one ([`Caller::retries`]); `stepping`: a get that times out gives up at once.
    async fn batch_get_with(
        &self,
        who: &Caller,
        gets: &[BatchGet],
        stepping: bool,
    ) -> Result<Vec<Result<Bytes, GraphError>>, GraphError> {
        let mut results: Vec<Option<Result<Bytes, GraphError>>> =
            (0..gets.len()).map(|_| None).collect();
        let mut pending: Vec<usize> = (0..gets.len()).collect();
        let counts: Vec<Retries> = gets.iter().map(|_| who.retries()).collect();
        let mut throttles = vec![0u32; gets.len()];
        let mut outer_throttles = 0u32;
        let mut unreachable = 0u32;
        let mut token = self.tokens.access_token(&who.account).await?;
        let mut refreshed = false;
        while !pending.is_empty() {
            let permits = self.permits(who, pending.len().min(MAX_BATCH)).await?;
            let take: Vec<usize> = pending.drain(..permits.len()).collect();
            let requests: Vec<Value> = take
                .iter()
                .map(|&i| json!({"id": i.to_string(), "method": "GET", "url": self.relative(&gets[i].url)}))
                .collect();
            self.stats.batches.fetch_add(1, Ordering::Relaxed);
            self.stats
                .requests
                .fetch_add(take.len() as u64, Ordering::Relaxed);
            let outer = self
                .post_json(
                    &self.url("$batch"),
                    &token,
                    &json!({ "requests": requests }),
                )
                .await;
            // Any outer answer that carries inner responses is read for them: Graph answers 424
            // (and may answer other statuses) for a batch whose inner requests were throttled,
            // with the inner 429s inside.
            let inner = match &outer {
                Ok(a) => inner_responses(&a.body),
                Err(_) => None,
            };
            let answers = match &outer {
                _ if inner.is_some() => inner,
                Err(super::BodyError::Unreachable(_)) => {
                    // The envelope never left: nothing was spent at Graph, nothing is the items'
                    // fault. Wait for the network, attempts not counted.
                    for p in permits {
                        p.failed();
                    }
                    unreachable += 1;
                    pending.splice(0..0, take);
                    self.reach
                        .wait(crate::net::Service::Graph, unreachable, &self.jitter)
                        .await?;
                    continue;
                }
                Ok(a) => match answered(a.status, &a.headers, &a.body, refreshed) {
                    Err(Failed::Unauthorized) => {
                        for p in permits {
                            p.succeeded(None);
                        }
                        refreshed = true;
                        token = self.tokens.refresh_after_401(&who.account, &token).await?;
                        pending.splice(0..0, take);
                        continue;
                    }
                    Err(Failed::Throttled(scope, retry_after)) => {
                        // The whole envelope was throttled: every inner request counts as one.
                        self.stats.throttled.fetch_add(1, Ordering::Relaxed);
                        for p in permits {
                            p.throttled(scope, retry_after);
                        }
                        outer_throttles += 1;
                        if outer_throttles >= MAX_OUTER_THROTTLES {
                            self.give_up_all(
                                who,
                                gets,
                                &counts,
                                &mut results,
                                take.into_iter().chain(pending.drain(..)),
                                "the $batch request kept being throttled",
                            );
                            break;
                        }
                        pending.splice(0..0, take);
                        continue;
                    }
                    // An envelope answered without its inner responses: none of them is known.
                    Ok(())
                    | Err(Failed::Transient { .. } | Failed::BareBadRequest | Failed::Refused) => {
                        None
                    }
                },
                Err(super::BodyError::TooLarge(_) | super::BodyError::Failed { .. }) => None,
            };
            let Some(answers) = answers else {
                // The envelope failed: none of its contents is known; all go again. The failure
                // spends from the counts of the requests it carried, not from the rest of the
                // call, so one bad envelope never gives up requests that were never in it.
                for p in permits {
                    p.failed();
                }
                let failed = Failed::Transient { timed_out: false };
                let mut worst = None;
                let mut again = Vec::new();
                for i in take {
                    match counts[i].retry_after(&failed) {
                        Some((_, n)) => {
                            worst = worst.max(Some(n));
                            again.push(i);
                        }
                        None => {
                            let last = "the $batch request carrying it kept failing";
                            results[i] =
                                Some(Err(gave_up(who, &gets[i].item, &counts[i], last, false)));
                        }
                    }
                }
                pending.splice(0..0, again);
                if let Some(n) = worst {
                    self.stats.retries.fetch_add(1, Ordering::Relaxed);
                    self.clock.sleep(pause(self.pause, n, &self.jitter)).await;
                }
                continue;
            };
            let by_id: HashMap<String, &Value> = answers
                .iter()
                .filter_map(|r| Some((r["id"].as_str()?.to_owned(), r)))
                .collect();
            let mut retry_later = Vec::new();
            let mut worst = None;
            let mut refresh_needed = false;
            for (i, permit) in take.into_iter().zip(permits) {
                // A missing answer and a 424 (a dependency failed; we send none, so the service
                // did not run it) are retried like a 5xx.
                let (status, headers, body) = match by_id.get(&i.to_string()) {
                    Some(r) => (
                        r["status"].as_u64().unwrap_or(0) as u16,
                        inner_headers(r),
                        inner_body(r),
                    ),
                    None => (0, HeaderMap::new(), Bytes::new()),
                };
                let disposition = match status {
                    0 | 424 => Err(Failed::Transient { timed_out: false }),
                    1..=423 | 425..=u16::MAX => answered(status, &headers, &body, refreshed),
                };
                match disposition {
                    Ok(()) => {
                        permit.succeeded(percentage(&headers));
                        self.stats
                            .bytes
                            .fetch_add(body.len() as u64, Ordering::Relaxed);
                        results[i] = Some(Ok(body));
                    }
                    Err(Failed::Throttled(scope, ra)) => {
                        self.stats.throttled.fetch_add(1, Ordering::Relaxed);
                        permit.throttled(scope, ra);
                        throttles[i] += 1;
                        if throttles[i] >= MAX_OUTER_THROTTLES {
                            results[i] =
                                Some(Err(gave_up(who, &gets[i].item, &counts[i], "429", false)));
                        } else {
                            retry_later.push(i);
                        }
                    }
                    Err(Failed::Unauthorized) => {
                        permit.succeeded(None);
                        refresh_needed = true;
                        retry_later.push(i);
                    }
                    Err(failed @ Failed::Transient { timed_out }) => {
                        permit.failed();
                        let spent = match (timed_out, stepping) {
                            (true, true) => None,
                            (true, false) | (false, _) => counts[i].retry_after(&failed),
                        };
                        match spent {
                            Some((_, n)) => {
                                worst = worst.max(Some(n));
                                retry_later.push(i);
                            }
                            None => {
                                let last = if status == 0 {
                                    "no answer for it in the $batch response".to_owned()
                                } else {
                                    format!("HTTP {status}")
                                };
                                let e = gave_up(who, &gets[i].item, &counts[i], &last, timed_out);
                                results[i] = Some(Err(e));
                            }
                        }
                    }
                    Err(failed @ Failed::BareBadRequest) => {
                        // Counted by the limiter as an answer; the item's count pays the retry.
                        permit.succeeded(percentage(&headers));
                        match counts[i].retry_after(&failed) {
                            Some((_, n)) => {
                                worst = worst.max(Some(n));
                                retry_later.push(i);
                            }
                            None => {
                                results[i] = Some(Err(refused(who, &gets[i].item, status, &body)));
                            }
                        }
                    }
                    Err(Failed::Refused) => {
                        permit.succeeded(percentage(&headers));
                        results[i] = Some(Err(refused(who, &gets[i].item, status, &body)));
                    }
                }
            }
            pending.splice(0..0, retry_later);
            if refresh_needed {
                refreshed = true;
                token = self.tokens.refresh_after_401(&who.account, &token).await?;
            }
            if let Some(n) = worst {
                self.stats.retries.fetch_add(1, Ordering::Relaxed);
                self.clock.sleep(pause(self.pause, n, &self.jitter)).await;
            }
        }
        Ok(results
            .into_iter()
            .zip(gets)
            .zip(&counts)
            .map(|((r, g), count)| {
                r.unwrap_or_else(|| {
                    let last = "no answer was recorded for this request";
                    Err(gave_up(who, &g.item, count, last, false))
                })
            })
            .collect())
    }

    /// Ends every get in `which` with a "gave up" error.
    fn give_up_all(
        &self,
        who: &Caller,
        gets: &[BatchGet],
        counts: &[Retries],
        results: &mut [Option<Result<Bytes, GraphError>>],
        which: impl Iterator<Item = usize>,
        last: &str,
    ) {
        for i in which {
            results[i] = Some(Err(gave_up(who, &gets[i].item, &counts[i], last, false)));
        }
    }

    async fn permits(&self, who: &Caller, want: usize) -> Result<Vec<Permit>, GraphError> {
        match who.deadline {
            // With a deadline, take one slot at a time so the deadline is honoured.
            Some(_) => Ok(vec![self.permit(who).await?]),
            None => Ok(self
                .limiter
                .acquire_up_to(&who.user_id, who.lane, want)
                .await?),
        }
    }

    /// A URL relative to the version root, as `$batch` wants it.
    fn relative(&self, url: &str) -> String {
        let rel = url.strip_prefix(&*self.base).unwrap_or(url);
        if rel.starts_with('/') {
            rel.to_owned()
        } else {
            format!("/{rel}")
        }
    }
}

/// The inner responses of a `$batch` answer, when its body has them.
fn inner_responses(body: &[u8]) -> Option<Vec<Value>> {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v["responses"].as_array().cloned())
}

fn inner_headers(r: &Value) -> HeaderMap {
    let mut h = HeaderMap::new();
    if let Some(obj) = r["headers"].as_object() {
        for (k, v) in obj {
            if let (Ok(name), Some(Ok(val))) = (
                HeaderName::from_bytes(k.as_bytes()),
                v.as_str().map(HeaderValue::from_str),
            ) {
                h.insert(name, val);
            }
        }
    }
    h
}

/// An inner body: JSON stays JSON (re-serialised), anything else arrives base64-encoded.
fn inner_body(r: &Value) -> Bytes {
    let is_json = r["headers"]
        .as_object()
        .and_then(|h| {
            h.iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
                .and_then(|(_, v)| v.as_str())
        })
        .map(|ct| ct.contains("json"))
        .unwrap_or(true);
    match &r["body"] {
        Value::Null => Bytes::new(),
        Value::String(s) if !is_json => base64::engine::general_purpose::STANDARD
            .decode(s)
            .or_else(|_| base64::engine::general_purpose::URL_SAFE.decode(s))
            .map(Bytes::from)
            .unwrap_or_else(|_| Bytes::from(s.clone().into_bytes())),
        v => Bytes::from(v.to_string().into_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inner_bodies_decode_json_and_base64() {
        let r = json!({"id":"1","status":200,"headers":{"Content-Type":"application/json"},"body":{"a":1}});
        assert_eq!(&inner_body(&r)[..], br#"{"a":1}"#);
        let r =
            json!({"id":"1","status":200,"headers":{"Content-Type":"text/html"},"body":"PGh0bWw+"});
        assert_eq!(&inner_body(&r)[..], b"<html>");
        let h = inner_headers(
            &json!({"headers":{"x-ms-throttle-scope":"Application","Retry-After":"2.128"}}),
        );
        assert_eq!(
            super::super::scope(&h),
            crate::limiter::ThrottleScope::Application
        );
    }
}
