//! Faults injected on demand: error statuses, writes applied but answered 504 or dropped, delays.
//! Ratios draw from a seeded generator so a run is reproducible.

use std::time::Duration;

use rand::{rngs::StdRng, Rng, SeedableRng};

use super::Endpoint;

/// What happens to a request hit by a fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// Answered with this status (409/500/502/503/504/529) and Notion's code; nothing is applied.
    Status(u16),
    /// The write is applied, then answered `504 gateway_timeout`.
    AppliedThen504,
    /// The write is applied, then the connection drops while the answer's body is sent.
    AppliedThenDrop,
    /// The write is applied, then answered `503 service_unavailable` saying so in
    /// `additional_data` (developers.notion.com/reference/request-limits): `retry_guidance`, and
    /// `committed_resource_id` for a created page or row, `committed_child_ids` for appended
    /// blocks.
    AppliedThen503Saved,
    /// The request waits this long, then is handled normally.
    Delay(Duration),
    /// Answered `429` naming `public_api_request_blocked` (Notion: "retrying won't help");
    /// nothing is applied. With [`FaultRule::after`], a connection blocked part way through.
    RequestBlocked,
}

/// When a fault fires.
#[derive(Clone, Debug, PartialEq)]
pub struct FaultRule {
    /// The fault.
    pub kind: FaultKind,
    /// Only this endpoint (any when `None`).
    pub endpoint: Option<Endpoint>,
    /// Fires on the next `n` matching requests, then retires (`None`: no count limit).
    pub count: Option<u32>,
    /// Fires on this fraction of matching requests (1.0 = all).
    pub ratio: f64,
    /// Lets this many matching requests pass before it may fire (e.g. the second part of an upload).
    pub skip: u32,
}

impl FaultRule {
    /// A rule that fires on every matching request until limited with [`Self::times`] or [`Self::ratio`].
    pub fn new(kind: FaultKind) -> Self {
        Self {
            kind,
            endpoint: None,
            count: None,
            ratio: 1.0,
            skip: 0,
        }
    }

    /// Only after `n` matching requests went through untouched.
    pub fn after(mut self, n: u32) -> Self {
        self.skip = n;
        self
    }

    /// Only on `e`.
    pub fn on(mut self, e: Endpoint) -> Self {
        self.endpoint = Some(e);
        self
    }

    /// Only the next `n` matching requests.
    pub fn times(mut self, n: u32) -> Self {
        self.count = Some(n);
        self
    }

    /// On a fraction of matching requests (seeded).
    pub fn ratio(mut self, r: f64) -> Self {
        self.ratio = r;
        self
    }
}

/// The active rules, checked in insertion order.
#[derive(Debug)]
pub struct Faults {
    rules: Vec<FaultRule>,
    rng: StdRng,
}

impl Faults {
    /// No rules; ratios draw from `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            rules: Vec::new(),
            rng: StdRng::seed_from_u64(seed),
        }
    }

    /// Adds a rule.
    pub fn push(&mut self, r: FaultRule) {
        self.rules.push(r);
    }

    /// Removes every rule.
    pub fn clear(&mut self) {
        self.rules.clear();
    }

    /// The fault for a request to `e`, if any fires; counts down and retires exhausted rules.
    pub fn pick(&mut self, e: Endpoint) -> Option<FaultKind> {
        let mut fired = None;
        for (i, r) in self.rules.iter_mut().enumerate() {
            if r.endpoint.is_some_and(|x| x != e) || r.count == Some(0) {
                continue;
            }
            // Applied-then-fail only makes sense for writes (uploads' create, send and complete
            // included).
            if matches!(
                r.kind,
                FaultKind::AppliedThen504
                    | FaultKind::AppliedThenDrop
                    | FaultKind::AppliedThen503Saved
            ) && !e.is_write()
            {
                continue;
            }
            if r.skip > 0 {
                r.skip -= 1;
                continue;
            }
            if r.ratio < 1.0 && self.rng.random::<f64>() >= r.ratio {
                continue;
            }
            if let Some(c) = r.count.as_mut() {
                *c -= 1;
            }
            fired = Some((i, r.kind.clone()));
            break;
        }
        let (i, kind) = fired?;
        if self.rules[i].count == Some(0) {
            self.rules.remove(i);
        }
        Some(kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_and_ratio() {
        let mut f = Faults::new(1);
        f.push(FaultRule::new(FaultKind::Status(503)).times(2));
        assert_eq!(f.pick(Endpoint::GetPage), Some(FaultKind::Status(503)));
        assert_eq!(f.pick(Endpoint::GetPage), Some(FaultKind::Status(503)));
        assert_eq!(f.pick(Endpoint::GetPage), None);
        f.push(FaultRule::new(FaultKind::Status(500)).ratio(0.5));
        let hits = (0..1000)
            .filter(|_| f.pick(Endpoint::GetPage).is_some())
            .count();
        assert!((400..600).contains(&hits), "{hits}");
        let mut g = Faults::new(1);
        g.push(FaultRule::new(FaultKind::Status(500)).ratio(0.5));
        let again = (0..1000)
            .filter(|_| g.pick(Endpoint::GetPage).is_some())
            .count();
        assert_eq!(hits, again, "seeded");
    }

    #[test]
    fn after_lets_the_first_matching_requests_pass() {
        let mut f = Faults::new(1);
        f.push(
            FaultRule::new(FaultKind::AppliedThen504)
                .on(Endpoint::SendUpload)
                .after(1)
                .times(1),
        );
        // a read and another endpoint neither fire nor count
        assert_eq!(f.pick(Endpoint::GetUpload), None);
        assert_eq!(f.pick(Endpoint::SendUpload), None);
        assert_eq!(
            f.pick(Endpoint::SendUpload),
            Some(FaultKind::AppliedThen504)
        );
        assert_eq!(f.pick(Endpoint::SendUpload), None);
        // applied-then faults fire on every write, uploads included, never on reads
        f.push(FaultRule::new(FaultKind::AppliedThenDrop));
        for e in [
            Endpoint::CreateUpload,
            Endpoint::CompleteUpload,
            Endpoint::UpdateBlock,
            Endpoint::DeleteBlock,
        ] {
            assert_eq!(f.pick(e), Some(FaultKind::AppliedThenDrop), "{e:?}");
        }
        assert_eq!(f.pick(Endpoint::ListChildren), None);
    }
}
