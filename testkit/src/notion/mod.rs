//! A Notion API test server (axum on loopback) that enforces the documented rules: bearer and
//! `Notion-Version` checks, sharing, pages and blocks, append limits, file uploads, databases with
//! their data sources and rows, a per-token rate limit, plus fault injection and inspection of what
//! arrived.
//!
//! It is never more lenient than Notion: where the docs are unsure, the stricter reading wins.

pub mod databases;
pub mod error;
pub mod faults;
pub mod mentions;
mod moves;
pub mod rate;
mod routes;
pub mod store;
pub mod switches;
pub mod uploads;
pub mod validate;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use faults::{FaultKind, FaultRule};
use notebridge::clock::Clock;
pub use rate::{RateConfig, WindowBudget, WorkspaceLimit};
pub use store::DumpNode;

/// The Notion version our client pins.
pub const PINNED_VERSION: &str = "2026-03-11";
/// `Notion-Version` values the server accepts.
pub const ACCEPTED_VERSIONS: &[&str] = &[
    "2021-05-13",
    "2021-08-16",
    "2022-02-22",
    "2022-06-28",
    "2025-09-03",
    "2026-03-11",
];

/// The API operations, for counters, logs and targeted faults.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Endpoint {
    /// `GET /v1/users/me`.
    UsersMe,
    /// `POST /v1/pages`.
    CreatePage,
    /// `GET /v1/pages/{id}`.
    GetPage,
    /// `PATCH /v1/pages/{id}`.
    UpdatePage,
    /// `GET /v1/blocks/{id}`.
    GetBlock,
    /// `PATCH /v1/blocks/{id}`.
    UpdateBlock,
    /// `DELETE /v1/blocks/{id}`.
    DeleteBlock,
    /// `GET /v1/blocks/{id}/children`.
    ListChildren,
    /// `PATCH /v1/blocks/{id}/children`.
    AppendChildren,
    /// `POST /v1/file_uploads`.
    CreateUpload,
    /// `POST /v1/file_uploads/{id}/send`.
    SendUpload,
    /// `POST /v1/file_uploads/{id}/complete`.
    CompleteUpload,
    /// `GET /v1/file_uploads/{id}`.
    GetUpload,
    /// `POST /v1/databases`.
    CreateDatabase,
    /// `GET /v1/databases/{id}`.
    GetDatabase,
    /// `GET /v1/data_sources/{id}`.
    GetDataSource,
    /// `PATCH /v1/data_sources/{id}`.
    UpdateDataSource,
    /// `POST /v1/data_sources/{id}/query`.
    QueryDataSource,
    /// `POST /v1/pages/{id}/move`.
    MovePage,
    /// `PATCH /v1/databases/{id}`.
    UpdateDatabase,
    /// Anything else (answered 400 `invalid_request_url`).
    Unknown,
}

impl Endpoint {
    /// Whether the operation changes what Notion holds (the targets of applied-then-fail faults).
    pub fn is_write(self) -> bool {
        matches!(
            self,
            Endpoint::CreatePage
                | Endpoint::UpdatePage
                | Endpoint::UpdateBlock
                | Endpoint::DeleteBlock
                | Endpoint::AppendChildren
                | Endpoint::CreateUpload
                | Endpoint::SendUpload
                | Endpoint::CompleteUpload
                | Endpoint::CreateDatabase
                | Endpoint::UpdateDataSource
                | Endpoint::MovePage
                | Endpoint::UpdateDatabase
        )
    }
}

/// Server settings.
#[derive(Clone, Debug)]
pub struct NotionServerConfig {
    /// The integration token accepted as `Authorization: Bearer <token>`.
    pub token: String,
    /// Rate limit per token.
    pub rate: RateConfig,
    /// Seed for fault ratios.
    pub seed: u64,
    /// How long an unattached upload lives.
    pub upload_expiry: Duration,
    /// `workspace_limits.max_file_upload_size_in_bytes`.
    pub max_file_upload_size: u64,
}

impl Default for NotionServerConfig {
    /// Token `secret_test`, 3 requests/s with a burst of 5, seed 0, 1 h upload expiry, 5 GiB limit.
    fn default() -> Self {
        Self {
            token: "secret_test".into(),
            rate: RateConfig::default(),
            seed: 0,
            upload_expiry: Duration::from_secs(3600),
            max_file_upload_size: 5 * 1024 * 1024 * 1024,
        }
    }
}

/// One handled request, as logged.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LoggedRequest {
    /// HTTP method.
    pub method: String,
    /// Path without the query.
    pub path: String,
    /// The operation.
    pub endpoint: Endpoint,
    /// HTTP status answered.
    pub status: u16,
    /// Notion error code when it failed.
    pub code: Option<String>,
}

/// Request counters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    /// Requests per operation (every answer counted, errors included).
    pub per_endpoint: BTreeMap<Endpoint, u64>,
    /// 429 answers sent.
    pub rate_limited: u64,
    /// 400 `validation_error` answers sent.
    pub validation_errors: u64,
    /// Injected faults fired.
    pub faults: u64,
    /// `PATCH /v1/pages/{id}` answered 200 whose body named nothing to change (a capability
    /// check): counted among the writes above, though it changed nothing.
    pub empty_updates: u64,
}

impl Counters {
    /// Every request that may change what Notion holds ([`Endpoint::is_write`]), the updates that
    /// named nothing to change (a capability's proof) included: what a run that changes nothing
    /// must not send.
    pub fn writes(&self) -> u64 {
        self.per_endpoint
            .iter()
            .filter(|(e, _)| e.is_write())
            .map(|(_, n)| n)
            .sum()
    }

    /// Requests that may change what Notion holds ([`Endpoint::is_write`]), less the updates that
    /// named nothing to change.
    pub fn changing_writes(&self) -> u64 {
        self.per_endpoint
            .iter()
            .filter(|(e, _)| e.is_write())
            .map(|(_, n)| n)
            .sum::<u64>()
            - self.empty_updates
    }
}

/// What the server recorded about an upload.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UploadInfo {
    /// `pending`, `uploaded` or `expired`.
    pub status: String,
    /// File name.
    pub filename: Option<String>,
    /// Bytes received in total (once uploaded).
    pub content_length: Option<u64>,
    /// [`uploads::content_hash`] of the content (once uploaded).
    pub hash: Option<String>,
    /// Attached to a block or page.
    pub attached: bool,
}

pub(crate) struct Inner {
    pub(crate) store: store::Store,
    pub(crate) uploads: uploads::Uploads,
    pub(crate) rate: rate::RateLimiter,
    pub(crate) faults: faults::Faults,
    pub(crate) log: Vec<LoggedRequest>,
    pub(crate) counters: Counters,
    pub(crate) switches: switches::Switches,
    /// Tokens of the workspace's other connections, accepted beside the configured one.
    pub(crate) tokens: Vec<String>,
    /// The wall time (Unix ms) every write is stamped with, when a test fixes it (to put a
    /// person's edit in the same minute as the integration's write, or minutes after it).
    pub(crate) stamp_at: Option<i64>,
    /// With `stamp_at`: how much later each write is stamped than the one before.
    pub(crate) stamp_step: Option<i64>,
    /// Requests the configured token may still make before it expires (`None`: no expiry).
    pub(crate) token_requests_left: Option<u64>,
}

pub(crate) struct Shared {
    pub(crate) inner: Mutex<Inner>,
    pub(crate) config: NotionServerConfig,
    pub(crate) bot_id: String,
    pub(crate) base_url: String,
    pub(crate) clock: Clock,
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .expect("notion test server state poisoned")
    }
}

/// A running Notion test server; stops on drop or [`NotionServer::shutdown`].
pub struct NotionServer {
    shared: Arc<Shared>,
    outage: crate::net::Outage,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

/// Marks `id` and every block above it, up to and with its page, last edited by the person now.
fn person_touch(store: &mut store::Store, id: &str, now: i64) {
    let mut at = Some(id.to_owned());
    while let Some(cur) = at.take() {
        let Some(n) = store.get_mut(&cur) else { break };
        n.edited_ms = now;
        n.person_edit = true;
        match (&n.kind, &n.parent) {
            (store::model::NodeKind::Page { .. }, _) => break,
            (_, store::model::ParentRef::Page(p) | store::model::ParentRef::Block(p)) => {
                at = Some(p.clone())
            }
            _ => break,
        }
    }
}

impl NotionServer {
    /// Binds 127.0.0.1 on a free port and serves until dropped.
    ///
    /// # Panics
    /// When no loopback port can be bound: a test cannot run without one.
    pub async fn start(config: NotionServerConfig) -> Self {
        let outage = crate::net::Outage::default();
        let listener = crate::net::SwitchedListener::bind(outage.clone()).await;
        let addr = listener.addr();
        let inner = Inner {
            store: store::Store::default(),
            uploads: uploads::Uploads::new(config.upload_expiry, config.max_file_upload_size),
            rate: rate::RateLimiter::new(config.rate),
            faults: faults::Faults::new(config.seed),
            log: Vec::new(),
            counters: Counters::default(),
            switches: switches::Switches::default(),
            tokens: Vec::new(),
            stamp_at: None,
            stamp_step: None,
            token_requests_left: None,
        };
        let shared = Arc::new(Shared {
            inner: Mutex::new(inner),
            config,
            bot_id: uuid::Uuid::new_v4().to_string(),
            base_url: format!("http://{addr}"),
            clock: Clock::system(),
        });
        let app = routes::router(shared.clone());
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(async {
                let _ = rx.await;
            });
            if let Err(e) = serve.await {
                tracing::warn!(error = %e, "notion test server stopped with an error");
            }
        });
        Self {
            shared,
            outage,
            stop: Some(tx),
            task: Some(task),
        }
    }

    /// `http://127.0.0.1:PORT`; requests go to `{base_url}/v1/...`.
    pub fn base_url(&self) -> &str {
        &self.shared.base_url
    }

    /// The outage switch: stop listening for a while, come back on the same address.
    pub fn outage(&self) -> crate::net::Outage {
        self.outage.clone()
    }

    /// The accepted integration token.
    pub fn token(&self) -> &str {
        &self.shared.config.token
    }

    /// The bot user's id (`GET /v1/users/me`).
    pub fn bot_id(&self) -> &str {
        &self.shared.bot_id
    }

    /// Stops serving and waits for the server task.
    pub async fn shutdown(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.task.take() {
            // Open keep-alive connections would hold a graceful shutdown; the tests are done with them.
            t.abort();
            let _ = t.await;
        }
    }

    /// Creates a root page shared with the integration; returns its id.
    pub fn add_shared_page(&self, title: &str) -> String {
        let now = self.shared.clock.now_ms();
        self.shared.lock().store.add_root_page(title, now)
    }

    /// Renames page `id` as a user would in Notion (mentions of it show the new title).
    pub fn rename_page(&self, id: &str, title: &str) {
        let mut g = self.shared.lock();
        if let Some(store::model::NodeKind::Page { title: t, .. }) =
            g.store.get_mut(id).map(|n| &mut n.kind)
        {
            *t = vec![store::model::normalise_rich_text_item(
                &serde_json::json!({"text": {"content": title}}),
            )];
        }
    }

    /// Fixes the wall time every later write is stamped with (`None`: the clock's again).
    /// Notion shows these stamps rounded down to the minute.
    pub fn stamp_writes_at(&self, ms: Option<i64>) {
        let mut g = self.shared.lock();
        g.stamp_at = ms;
        g.stamp_step = None;
    }

    /// Stamps the next write at `start_ms` and each one after `step_ms` later (a run whose writes
    /// fall in different minutes, deterministically).
    pub fn stamp_writes_from(&self, start_ms: i64, step_ms: i64) {
        let mut g = self.shared.lock();
        g.stamp_at = Some(start_ms);
        g.stamp_step = Some(step_ms);
    }

    /// The wall time writes are stamped with now.
    fn stamp(&self, g: &Inner) -> i64 {
        g.stamp_at.unwrap_or_else(|| self.shared.clock.now_ms())
    }

    /// A person edits the text of block `id` in Notion's app: its rich text becomes `text`, and
    /// the block and the page holding it are last edited now, by that person.
    pub fn edit_block_as_person(&self, id: &str, text: &str) {
        let mut g = self.shared.lock();
        let now = self.stamp(&g);
        let n = g.store.get_mut(id).expect("a block of the workspace");
        if let store::model::NodeKind::Block { payload, .. } = &mut n.kind {
            payload["rich_text"] = serde_json::json!([store::model::normalise_rich_text_item(
                &serde_json::json!({"text": {"content": text}})
            )]);
        }
        person_touch(&mut g.store, id, now);
    }

    /// A person retitles page (or row) `id` in Notion's app: a property edit.
    pub fn retitle_as_person(&self, id: &str, title: &str) {
        let mut g = self.shared.lock();
        let now = self.stamp(&g);
        if let Some(store::model::NodeKind::Page { title: t, .. }) =
            g.store.get_mut(id).map(|n| &mut n.kind)
        {
            *t = vec![store::model::normalise_rich_text_item(
                &serde_json::json!({"text": {"content": title}}),
            )];
        }
        person_touch(&mut g.store, id, now);
    }

    /// A person moves page (or row) `id` under the page `new_parent` in Notion's app: as
    /// `POST /v1/pages/{id}/move` does it (same refusals, appended last), but the page and both
    /// parents are last edited now by that person.
    ///
    /// # Panics
    /// When the move would be refused (a test setup error), naming why.
    pub fn move_as_person(&self, id: &str, new_parent: &str) {
        let mut g = self.shared.lock();
        let now = self.stamp(&g);
        let to = store::model::ParentRef::Page(new_parent.to_owned());
        let old = g.store.get(id).map(|n| n.parent.clone());
        if let Err(e) = moves::check(&g.store, id, &to) {
            panic!("a person cannot move {id} under {new_parent}: {e}");
        }
        g.store.move_page(id, to, now);
        person_touch(&mut g.store, id, now);
        person_touch(&mut g.store, new_parent, now);
        if let Some(store::model::ParentRef::Page(p) | store::model::ParentRef::Block(p)) = old {
            person_touch(&mut g.store, &p, now);
        }
    }

    /// A person adds a page titled `title` at the end of page `parent` in Notion's app; its id.
    /// The new page and `parent` are last edited now by that person.
    ///
    /// # Panics
    /// When `parent` is no page of the workspace (a test setup error).
    pub fn add_child_page_as_person(&self, parent: &str, title: &str) -> String {
        let mut g = self.shared.lock();
        let now = self.stamp(&g);
        assert!(
            matches!(
                g.store.get(parent).map(|n| &n.kind),
                Some(store::model::NodeKind::Page { .. })
            ),
            "{parent} is no page of the workspace"
        );
        let rt = vec![store::model::normalise_rich_text_item(
            &serde_json::json!({"text": {"content": title}}),
        )];
        let id = g
            .store
            .create_page(parent, rt, Value::Null, Value::Null, now);
        person_touch(&mut g.store, &id, now);
        person_touch(&mut g.store, parent, now);
        id
    }

    /// A person adds a row titled `title` to data source `data_source` in Notion's app (its other
    /// properties empty); its id. The row is last edited now by that person.
    ///
    /// # Panics
    /// When `data_source` is not in the workspace or refuses the row (a test setup error).
    pub fn add_row_as_person(&self, data_source: &str, title: &str) -> String {
        let mut g = self.shared.lock();
        let now = self.stamp(&g);
        let name = g
            .store
            .sources
            .get(data_source)
            .expect("a data source of the workspace")
            .title_name()
            .to_owned();
        let body = serde_json::json!({
            "properties": {name: {"title": [{"text": {"content": title}}]}},
        });
        let body = body.as_object().expect("an object");
        let id =
            databases::routes::create_row(&mut g, data_source, body, Value::Null, Value::Null, now)
                .unwrap_or_else(|e| panic!("a person cannot add a row to {data_source}: {e:?}"));
        person_touch(&mut g.store, &id, now);
        id
    }

    /// A person moves page, row or database `id` to Notion's trash in the app: it and everything
    /// under it leave listings and queries; it is last edited now by that person.
    ///
    /// # Panics
    /// When `id` is not in the workspace (a test setup error).
    pub fn trash_as_person(&self, id: &str) {
        let mut g = self.shared.lock();
        let now = self.stamp(&g);
        // Only the trashed item is stamped, as `PATCH /v1/pages/{id}` with `in_trash` stamps it.
        let n = g.store.get_mut(id).expect("a page of the workspace");
        n.in_trash = true;
        n.edited_ms = now;
        n.person_edit = true;
    }

    /// The `parent` object of page, database or block `id` as the API renders it (`None` for an
    /// id the workspace does not hold).
    pub fn parent_of(&self, id: &str) -> Option<Value> {
        let g = self.shared.lock();
        g.store.get(id).map(|n| g.store.parent_json(n))
    }

    /// Whether `id` is in the trash, by itself or under a trashed page or database (false for an
    /// id the workspace does not hold).
    pub fn is_trashed(&self, id: &str) -> bool {
        self.shared.lock().store.trashed(id)
    }

    /// Titles of the child pages and databases of page `id` not in the trash, in their order
    /// (rows are not children: see [`NotionServer::rows`]).
    pub fn children_titles(&self, id: &str) -> Vec<String> {
        let g = self.shared.lock();
        g.store
            .visible_children(id)
            .into_iter()
            .filter(|n| {
                matches!(
                    n.kind,
                    store::model::NodeKind::Page { .. } | store::model::NodeKind::Database { .. }
                )
            })
            .map(|n| n.title())
            .collect()
    }

    /// Removes the integration's access to the root page `id` (and so to everything under it).
    pub fn unshare(&self, id: &str) {
        self.shared.lock().store.unshare(id);
    }

    /// Shares the root page `id` with the integration again after [`NotionServer::unshare`], or
    /// for the first time after [`NotionServer::add_unshared_page`].
    pub fn share(&self, id: &str) {
        self.shared.lock().store.share(id);
    }

    /// Creates a root page that is not shared with the integration yet (a person who made the
    /// page and has not added the connection): it answers 404 until [`NotionServer::share`].
    pub fn add_unshared_page(&self, title: &str) -> String {
        let id = self.add_shared_page(title);
        self.unshare(&id);
        id
    }

    /// Lets the configured token make `requests` more requests, then answers every one `401
    /// unauthorized` as Notion does for a personal access token past its expiry (`None`: it never
    /// expires).
    pub fn expire_token_after(&self, requests: Option<u64>) {
        self.shared.lock().token_requests_left = requests;
    }

    /// Adds a fault rule (checked in order, after auth, version and rate checks).
    pub fn inject(&self, rule: FaultRule) {
        self.shared.lock().faults.push(rule);
    }

    /// Sets the workspace's lifetime block limit (`None`: unlimited, as on paid plans).
    pub fn set_block_limit(&self, limit: Option<usize>) {
        self.shared.lock().switches.block_limit = limit;
    }

    /// Gives the integration the Insert content capability, or takes it away.
    pub fn set_insert_content(&self, on: bool) {
        self.shared.lock().switches.insert_content = on;
    }

    /// Gives the integration the Update content capability, or takes it away.
    pub fn set_update_content(&self, on: bool) {
        self.shared.lock().switches.update_content = on;
    }

    /// Makes the token a personal access token of `name` (`None`: an internal connection's).
    pub fn set_personal_token_of(&self, name: Option<&str>) {
        self.shared.lock().switches.personal_token_of = name.map(str::to_owned);
    }

    /// Words Notion's answers in French (its messages are localised): only codes and data tell them
    /// apart.
    pub fn set_localised_messages(&self, on: bool) {
        self.shared.lock().switches.localised_messages = on;
    }

    /// Refuses links of these schemes (e.g. `["mailto"]`) as Notion does, without a path.
    pub fn refuse_link_schemes(&self, schemes: &[&str]) {
        self.shared.lock().switches.refused_link_schemes =
            schemes.iter().map(|s| s.to_ascii_lowercase()).collect();
    }

    /// Refuses external image URLs Notion could not fetch as an image.
    pub fn refuse_unusable_image_urls(&self, on: bool) {
        self.shared.lock().switches.refuse_unusable_image_urls = on;
    }

    /// Sets the workspace's per-file upload limit (Free plans: 5 MiB), as `GET /v1/users/me` reports
    /// it and sends enforce it.
    pub fn set_max_file_upload_size(&self, bytes: u64) {
        self.shared.lock().uploads.set_max_size(bytes);
    }

    /// Blocks the workspace holds, pages and trashed ones included (what the block limit counts).
    pub fn block_count(&self) -> usize {
        self.shared.lock().store.len()
    }

    /// Removes all fault rules.
    pub fn clear_faults(&self) {
        self.shared.lock().faults.clear();
    }

    /// Answers every request 429 with the remaining whole seconds as `Retry-After` for `d`: a
    /// workspace-level wait longer than any client cap.
    pub fn force_rate_limit_for(&self, d: Duration) {
        self.shared.lock().rate.block_for(d);
    }

    /// Like [`NotionServer::force_rate_limit_for`], the answers naming `reason` in
    /// `additional_data.rate_limit_reason` (e.g. a limit clients do not know yet).
    pub fn force_rate_limit_with_reason(&self, d: Duration, reason: &str) {
        self.shared.lock().rate.block_with_reason(d, reason);
    }

    /// Each token gets a fixed budget per window instead of the token bucket (today's
    /// per-connection limit); `None` goes back to the bucket.
    pub fn set_window_budget(&self, budget: Option<WindowBudget>) {
        self.shared.lock().rate.set_window_budget(budget);
    }

    /// A per-workspace limit shared by every token the server accepts; `None` removes it.
    pub fn set_workspace_limit(&self, limit: Option<WorkspaceLimit>) {
        self.shared.lock().rate.set_workspace_limit(limit);
    }

    /// Accepts `token` too: another connection of the same workspace (same pages, own limits).
    pub fn add_token(&self, token: &str) {
        self.shared.lock().tokens.push(token.to_owned());
    }

    /// Every request handled so far, in order.
    pub fn request_log(&self) -> Vec<LoggedRequest> {
        self.shared.lock().log.clone()
    }

    /// The counters.
    pub fn counters(&self) -> Counters {
        self.shared.lock().counters.clone()
    }

    /// The visible content tree under a page or block, or `None` for an unknown id.
    pub fn dump(&self, root_id: &str) -> Option<DumpNode> {
        self.shared.lock().store.dump(root_id)
    }

    /// The visible rows of a database (or of its data source `id`), in creation order, with each
    /// property's value.
    pub fn rows(&self, id: &str) -> Vec<databases::RowDump> {
        self.shared.lock().store.rows(id)
    }

    /// Visible databases directly in page `id`, in order, as (database id, data source id, title).
    pub fn databases_under(&self, id: &str) -> Vec<(String, String, String)> {
        let g = self.shared.lock();
        g.store
            .visible_children(id)
            .into_iter()
            .filter_map(|n| match &n.kind {
                store::model::NodeKind::Database { data_source, .. } => {
                    Some((n.id.clone(), data_source.clone(), n.title()))
                }
                _ => None,
            })
            .collect()
    }

    /// The schema of a data source as the API renders its `properties` (`None` for an unknown id).
    pub fn schema(&self, data_source: &str) -> Option<Value> {
        let g = self.shared.lock();
        let ds = g.store.sources.get(data_source)?;
        Some(Value::Object(
            ds.properties
                .iter()
                .map(|p| (p.name.clone(), p.render()))
                .collect(),
        ))
    }

    /// Visible child pages of `id` in order, as (id, title).
    pub fn pages_under(&self, id: &str) -> Vec<(String, String)> {
        self.shared.lock().store.pages_under(id)
    }

    /// Page `id` as `GET /v1/pages/{id}` answers it (`null` when there is none).
    pub fn page(&self, id: &str) -> serde_json::Value {
        let g = self.shared.lock();
        g.store
            .get(id)
            .map(|n| g.store.render_page(n, &self.shared.bot_id))
            .unwrap_or_default()
    }

    /// Visible direct children of a page or block, rendered as the API returns them.
    pub fn blocks_of(&self, page_id: &str) -> Vec<Value> {
        let g = self.shared.lock();
        let now = self.shared.clock.now_ms();
        let render = routes::file_renderer(&g.uploads, now);
        g.store
            .visible_children(page_id)
            .into_iter()
            .map(|n| g.store.render_block(n, &self.shared.bot_id, &render))
            .collect()
    }

    /// Titles that appear more than once among the visible child pages of `id`, with their counts.
    pub fn duplicate_titles(&self, id: &str) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        for (_, t) in self.pages_under(id) {
            *counts.entry(t).or_insert(0usize) += 1;
        }
        counts.retain(|_, n| *n > 1);
        counts
    }

    /// What the server recorded about an upload.
    pub fn upload(&self, id: &str) -> Option<UploadInfo> {
        let g = self.shared.lock();
        let now = self.shared.clock.now_ms();
        g.uploads.get(id).map(|u| UploadInfo {
            status: u.status(now).to_owned(),
            filename: u.filename.clone(),
            content_length: u.content_length,
            hash: u.hash.clone(),
            attached: u.attached,
        })
    }
}

impl Drop for NotionServer {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.task.take() {
            t.abort();
        }
    }
}
