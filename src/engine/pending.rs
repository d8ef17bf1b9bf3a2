//! A planning run kept until its plan is recorded (`store::pending_runs`): what `migrate --to` or
//! `sync` was asked, recorded before the run asks Notion or OneNote anything. A run stopped before
//! every source's plan was recorded (Notion refusing or blocking the token, a target not shared
//! yet, an outage) leaves it, and the next `--resume` of the same command plans and runs it, so
//! that the advice to resume after a fix always has something to go on with.

use serde::{Deserialize, Serialize};

use super::plan::Picks;
use super::way::Via;
use super::Request;
use crate::store::layouts::Layout;
use crate::sync::Deletions;

/// The command a request is run by (`migrate` or `sync`), as the store keys its pending run.
pub fn command_of(req: &Request) -> &'static str {
    if req.sync.is_some() {
        "sync"
    } else {
        "migrate"
    }
}

/// What a planning run was asked, as kept: every flag that decides its plan; not how long it may
/// run nor how many workers it has (the resume's own).
#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingRun {
    account: Option<String>,
    all_accounts: bool,
    target: Option<String>,
    notebooks: Vec<String>,
    groups: Vec<String>,
    sites: Vec<String>,
    all_sources: bool,
    /// `--from`, absolute (a resume may run from another folder).
    from: Vec<String>,
    via: String,
    layout: Option<String>,
    update: bool,
    retry_failed: bool,
    /// `sync`'s `--deletions` (`trash` or `keep`); `None` for `migrate`.
    deletions: Option<String>,
}

impl PendingRun {
    /// What `req` (a planning run, its `--from` paths made absolute as `from`) asks, as kept.
    pub fn of(req: &Request, from: &[std::path::PathBuf]) -> PendingRun {
        PendingRun {
            account: req.account.clone(),
            all_accounts: req.all_accounts,
            target: req.target.clone(),
            notebooks: req.picks.notebooks.clone(),
            groups: req.picks.groups.clone(),
            sites: req.picks.sites.clone(),
            all_sources: req.picks.all_sources,
            from: from.iter().map(|p| p.display().to_string()).collect(),
            via: req.via.as_str().to_owned(),
            layout: req.layout.map(|l| l.as_str().to_owned()),
            update: req.update,
            retry_failed: req.retry_failed,
            deletions: req.sync.map(|d| {
                match d {
                    Deletions::Trash => "trash",
                    Deletions::Keep => "keep",
                }
                .to_owned()
            }),
        }
    }

    /// Its text in the store.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a pending run serialises")
    }

    /// A pending run from its text; `None` for one this build cannot read (it is not continued).
    pub fn from_json(s: &str) -> Option<PendingRun> {
        serde_json::from_str(s).ok()
    }

    /// Whether `resume`'s own choice of sources (`--account`, `--from`) leaves room for this run:
    /// a resume that names another account or other files goes on with what is queued instead.
    pub fn fits(&self, resume: &Request) -> bool {
        let account = match &resume.account {
            Some(a) => self.account.as_deref() == Some(a.as_str()),
            None => true,
        };
        let from = resume.from.is_empty()
            || resume
                .from
                .iter()
                .map(|p| {
                    crate::imports::absolute(p)
                        .map(|p| p.display().to_string())
                        .unwrap_or_default()
                })
                .eq(self.from.iter().cloned());
        account && from && (!resume.all_accounts || self.all_accounts)
    }

    /// The planning run to make for `resume`: this one's flags, the resume's deadline and workers.
    pub fn continued_by(&self, resume: &Request) -> Request {
        Request {
            account: self.account.clone(),
            all_accounts: self.all_accounts,
            target: self.target.clone(),
            picks: Picks {
                notebooks: self.notebooks.clone(),
                groups: self.groups.clone(),
                sites: self.sites.clone(),
                all_sources: self.all_sources,
                own: false,
            },
            resume: false,
            deadline: resume.deadline,
            retry_failed: self.retry_failed || resume.retry_failed,
            update: self.update,
            dry_run: false,
            workers: resume.workers,
            from: self.from.iter().map(std::path::PathBuf::from).collect(),
            via: Via::parse(&self.via).unwrap_or_default(),
            layout: self.layout.as_deref().and_then(Layout::parse),
            sync: self.deletions.as_deref().map(|d| match d {
                "keep" => Deletions::Keep,
                _ => Deletions::Trash,
            }),
        }
    }

    /// How the run is named when it is continued.
    pub fn describe(&self) -> String {
        let mut what = Vec::new();
        if let Some(t) = &self.target {
            what.push(format!("--to {t}"));
        }
        if let Some(a) = &self.account {
            what.push(format!("--account {a}"));
        }
        for f in &self.from {
            what.push(format!("--from {f}"));
        }
        if self.update {
            what.push("--update".into());
        }
        what.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pending_run_comes_back_as_it_was_asked_with_the_resumes_limits() {
        let asked = Request {
            account: Some("alice".into()),
            target: Some("0123".into()),
            picks: Picks {
                notebooks: vec!["Work".into()],
                ..Picks::default()
            },
            update: true,
            via: Via::Files,
            layout: Some(Layout::Database),
            sync: Some(Deletions::Keep),
            ..Request::default()
        };
        let kept = PendingRun::from_json(&PendingRun::of(&asked, &[]).to_json()).unwrap();
        let resume = Request {
            resume: true,
            deadline: Some(7),
            workers: 3,
            ..Request::default()
        };
        assert!(kept.fits(&resume));
        let again = kept.continued_by(&resume);
        assert_eq!(PendingRun::of(&again, &[]), kept);
        assert!(!again.resume);
        assert_eq!((again.deadline, again.workers), (Some(7), 3));
        let other = Request {
            account: Some("bob".into()),
            ..resume
        };
        assert!(!kept.fits(&other), "a resume of another account");
    }
}
