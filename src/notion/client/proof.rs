//! Update content proven once per run, just before the run's first write: an update that names
//! nothing to change (`PATCH /v1/pages/{target}` with `{}`) under each target the run writes
//! under. No endpoint reports a connection's capabilities, and the link pass, `--update`, `sync`'s
//! moves and trashing all need Update content: met after half a migration, its refusal would leave
//! pages without their links. Proven at the first write rather than at the start, a run that finds
//! nothing to change (an unchanged `sync` or `migrate --update`) sends no write at all, and a run
//! whose proof is refused has its plan recorded already, so `--resume` goes on with it once the
//! capability is given.

use reqwest::Method;
use tokio::sync::Mutex;

use super::{Capability, NotionClient, NotionError, Refusal};

/// The run's one proof, shared by every clone of its Notion client.
#[derive(Debug)]
pub struct UpdateProof {
    /// The pages proven on (the run's targets).
    targets: Vec<String>,
    state: Mutex<State>,
}

#[derive(Debug)]
enum State {
    /// Not proven yet (or the last try met a failure that says nothing of the capability).
    Unproven,
    /// Every target took the update.
    Proven,
    /// Notion refused it: every later write is answered the same, without a request.
    Refused(Refused),
}

/// A refusal kept to answer later writes with.
#[derive(Clone, Debug)]
struct Refused {
    what: String,
    kind: Refusal,
    needs: Option<Capability>,
    status: u16,
    code: String,
    message: String,
}

impl Refused {
    fn error(&self) -> NotionError {
        NotionError::Refused {
            what: self.what.clone(),
            kind: self.kind,
            needs: self.needs,
            status: self.status,
            code: self.code.clone(),
            message: self.message.clone(),
        }
    }
}

impl UpdateProof {
    /// A proof still to be made on `targets` (dashed page ids).
    pub fn new(targets: impl IntoIterator<Item = String>) -> Self {
        Self {
            targets: targets.into_iter().collect(),
            state: Mutex::new(State::Unproven),
        }
    }

    /// Whether the proof was made in this run (a request was sent and accepted).
    pub async fn proven(&self) -> bool {
        matches!(*self.state.lock().await, State::Proven)
    }

    /// Proves Update content with `client` unless proven already; the first writer proves it while
    /// the others wait. A refusal is kept and answered to every later writer.
    pub(super) async fn before_write(&self, client: &NotionClient) -> Result<(), NotionError> {
        let mut state = self.state.lock().await;
        match &*state {
            State::Proven => return Ok(()),
            State::Refused(r) => return Err(r.error()),
            State::Unproven => {}
        }
        for t in &self.targets {
            match client.prove_update(t).await {
                Ok(()) => {}
                Err(NotionError::Refused {
                    what,
                    kind,
                    needs,
                    status,
                    code,
                    message,
                }) => {
                    let r = Refused {
                        what,
                        kind,
                        needs,
                        status,
                        code,
                        message,
                    };
                    let e = r.error();
                    *state = State::Refused(r);
                    return Err(e);
                }
                Err(e) => return Err(e),
            }
        }
        *state = State::Proven;
        Ok(())
    }
}

/// Whether a request of `method` to `path` may change what Notion holds (every request but a read
/// and a data source's query).
pub(super) fn is_write(method: &Method, path: &str) -> bool {
    let path = path.split('?').next().unwrap_or(path);
    match *method {
        Method::GET => false,
        Method::POST => !path.ends_with("/query"),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_queries_are_not_writes() {
        assert!(!is_write(&Method::GET, "/v1/pages/abc"));
        assert!(!is_write(
            &Method::POST,
            "/v1/data_sources/abc/query?filter_properties=x"
        ));
        for (m, p) in [
            (Method::POST, "/v1/pages"),
            (Method::PATCH, "/v1/pages/abc"),
            (Method::PATCH, "/v1/blocks/abc/children"),
            (Method::DELETE, "/v1/blocks/abc"),
            (Method::POST, "/v1/pages/abc/move"),
            (Method::POST, "/v1/file_uploads"),
            (Method::POST, "/v1/file_uploads/abc/send"),
        ] {
            assert!(is_write(&m, p), "{m} {p}");
        }
    }
}
