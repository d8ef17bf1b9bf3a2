//! Settings: every flag, environment variable and config key of the contract, merged in one fixed
//! order (flag > environment > config file > default) and validated before any work starts.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::failure::{Class, Classify, Meaning, Next, RetryBudget, Scope, ITEM_RETRIES};

/// Where a setting's default comes from, as the README's table shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultValue {
    /// This value, parsed like any other.
    Value(&'static str),
    /// A path in the platform's folders ([`DefaultDirs`]).
    Platform(&'static str),
    /// None: the setting stays unset.
    Unset,
}

/// One setting's declaration: everything the code, its error messages and the README's settings
/// table say about it, in one place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decl {
    /// The environment variable.
    pub env: &'static str,
    /// The command-line flag, for the settings that have one.
    pub flag: Option<&'static str>,
    /// The config file key as `table.key`, for the settings the file may hold.
    pub key: Option<&'static str>,
    /// Whether the config file may give it as a TOML number as well as a string.
    pub toml_number: bool,
    /// The default.
    pub default: DefaultValue,
    /// Words after the default in the README's table.
    pub note: &'static str,
    /// A valid value, shown in the message for a bad one.
    pub example: &'static str,
    /// The doc line.
    pub doc: &'static str,
}

/// A declared setting with its parser.
#[derive(Clone, Copy)]
pub struct Setting<T: 'static> {
    /// The declaration.
    pub decl: Decl,
    /// Turns a raw value into the setting, or says what is wrong with it.
    pub parse: fn(&str) -> Result<T, String>,
}

impl<T> Setting<T> {
    /// The default, parsed (`None` when the setting has no value by default).
    pub fn default_value(&self) -> Option<T> {
        match self.decl.default {
            DefaultValue::Value(v) => Some((self.parse)(v).expect("a declared default parses")),
            DefaultValue::Platform(_) | DefaultValue::Unset => None,
        }
    }
}

/// Declares every setting once: the `env` names, the typed declarations in [`decl`] and their list
/// [`ALL`] (in the README's order).
macro_rules! settings {
    ($(
        #[doc = $doc:literal]
        $name:ident: $ty:ty = {
            env: $env:literal,
            flag: $flag:expr,
            key: $key:expr,
            toml_number: $num:expr,
            default: $default:expr,
            note: $note:literal,
            example: $example:literal,
            parse: $parse:expr $(,)?
        }
    )*) => {
        /// Environment variable names, from the declarations, so docs, tests and code agree.
        pub mod env {
            $( #[doc = $doc] pub const $name: &str = $env; )*
        }

        /// Every setting's declaration with its parser.
        pub mod decl {
            use super::*;
            $(
                #[doc = $doc]
                pub const $name: Setting<$ty> = Setting {
                    decl: Decl {
                        env: $env,
                        flag: $flag,
                        key: $key,
                        toml_number: $num,
                        default: $default,
                        note: $note,
                        example: $example,
                        doc: $doc,
                    },
                    parse: $parse,
                };
            )*
        }

        /// Every declaration, in the README's order.
        pub const ALL: &[Decl] = &[$(decl::$name.decl),*];
    };
}

settings! {
    /// The SQLite state file (accounts, tokens, inventory, jobs, limiter ledger), created on first use.
    DB: PathBuf = {
        env: "NOTEBRIDGE_DB", flag: Some("--db"), key: None, toml_number: false,
        default: DefaultValue::Platform("<data dir>/notebridge/notebridge.db"), note: "(mode 0600)",
        example: "/var/lib/notebridge/notebridge.db", parse: parse_path,
    }
    /// The optional TOML config file.
    CONFIG: PathBuf = {
        env: "NOTEBRIDGE_CONFIG", flag: Some("--config"), key: None, toml_number: false,
        default: DefaultValue::Platform("<config dir>/notebridge/config.toml"), note: "if it exists",
        example: "/etc/notebridge/config.toml", parse: parse_path,
    }
    /// The Entra app (public client) id; `login` explains how to register one when it is missing.
    CLIENT_ID: String = {
        env: "NOTEBRIDGE_CLIENT_ID", flag: None, key: Some("microsoft.client_id"),
        toml_number: false, default: DefaultValue::Unset, note: "",
        example: "00000000-0000-0000-0000-000000000000", parse: parse_text,
    }
    /// `common`, `organizations`, `consumers`, or a tenant id or domain.
    TENANT: String = {
        env: "NOTEBRIDGE_TENANT", flag: None, key: Some("microsoft.tenant"), toml_number: false,
        default: DefaultValue::Value("common"), note: "", example: "organizations", parse: parse_text,
    }
    /// The sign-in service (`{authority}/{tenant}/oauth2/v2.0/...`).
    AUTHORITY_URL: String = {
        env: "NOTEBRIDGE_AUTHORITY_URL", flag: None, key: Some("microsoft.authority_url"),
        toml_number: false, default: DefaultValue::Value("https://login.microsoftonline.com"),
        note: "", example: "https://login.microsoftonline.com", parse: parse_url,
    }
    /// Microsoft Graph (national clouds, test servers).
    GRAPH_URL: String = {
        env: "NOTEBRIDGE_GRAPH_URL", flag: None, key: Some("microsoft.graph_url"),
        toml_number: false, default: DefaultValue::Value("https://graph.microsoft.com/v1.0"),
        note: "", example: "https://graph.microsoft.com/v1.0", parse: parse_url,
    }
    /// Space-separated delegated scopes (team notebooks need `Notes.Read.All`; `Files.Read` lets `--via auto` read section files from OneDrive).
    SCOPES: Vec<String> = {
        env: "NOTEBRIDGE_SCOPES", flag: None, key: Some("microsoft.scopes"), toml_number: false,
        default: DefaultValue::Value("offline_access User.Read Notes.Read Files.Read"), note: "",
        example: "offline_access User.Read Notes.Read Files.Read", parse: parse_scopes,
    }
    /// The Notion integration secret.
    NOTION_TOKEN: String = {
        env: "NOTION_TOKEN", flag: None, key: Some("notion.token"), toml_number: false,
        default: DefaultValue::Unset, note: "", example: "ntn_...", parse: parse_text,
    }
    /// The Notion API (requests go to `{base}/v1/...`).
    NOTION_URL: String = {
        env: "NOTEBRIDGE_NOTION_URL", flag: None, key: Some("notion.api_url"), toml_number: false,
        default: DefaultValue::Value("https://api.notion.com"), note: "",
        example: "https://api.notion.com", parse: parse_url,
    }
    /// Graph request windows per signed-in user.
    GRAPH_USER_LIMITS: Vec<Window> = {
        env: "NOTEBRIDGE_GRAPH_USER_LIMITS", flag: None, key: Some("graph.user_limits"),
        toml_number: false, default: DefaultValue::Value("120/60s,400/3600s"), note: "",
        example: "120/60s,400/1h", parse: parse_windows,
    }
    /// Graph requests in flight per user.
    GRAPH_USER_CONCURRENCY: u32 = {
        env: "NOTEBRIDGE_GRAPH_USER_CONCURRENCY", flag: None, key: Some("graph.user_concurrency"),
        toml_number: true, default: DefaultValue::Value("5"), note: "", example: "5",
        parse: parse_concurrency,
    }
    /// Optional Graph request windows for the whole app (every account in this database).
    GRAPH_APP_LIMITS: Vec<Window> = {
        env: "NOTEBRIDGE_GRAPH_APP_LIMITS", flag: None, key: Some("graph.app_limits"),
        toml_number: false, default: DefaultValue::Unset,
        note: "(Microsoft's 240/60s, 800/3600s are for app-only calls, which OneNote no longer accepts)",
        example: "120/60s,400/1h", parse: parse_windows,
    }
    /// Optional cap on Graph requests in flight for the whole app.
    GRAPH_APP_CONCURRENCY: u32 = {
        env: "NOTEBRIDGE_GRAPH_APP_CONCURRENCY", flag: None, key: Some("graph.app_concurrency"),
        toml_number: true, default: DefaultValue::Unset, note: "", example: "5",
        parse: parse_concurrency,
    }
    /// What background work (migration) may use of every window and cap.
    BACKGROUND_SHARE: BackgroundShare = {
        env: "NOTEBRIDGE_BACKGROUND_SHARE", flag: None, key: Some("limiter.background_share"),
        toml_number: true, default: DefaultValue::Value("auto"),
        note: "(all but a foreground reserve sized from the account's scans; or a fixed share in (0, 1])",
        example: "auto or 0.5", parse: parse_share,
    }
    /// Notion request pace per integration token.
    NOTION_RATE: NotionPace = {
        env: "NOTEBRIDGE_NOTION_RATE", flag: None, key: Some("notion.rate"), toml_number: false,
        default: DefaultValue::Value("auto"),
        note: "(learns the connection's budget in the first window and keeps it for the next run; a window fixes it)",
        example: "auto or 3/1s", parse: parse_notion_pace,
    }
    /// Pages worked on at once per account during `migrate`.
    WORKERS: usize = {
        env: "NOTEBRIDGE_WORKERS", flag: None, key: Some("migrate.workers"), toml_number: true,
        default: DefaultValue::Value("8"), note: "", example: "8", parse: parse_workers,
    }
    /// The pause before a failed request is sent again within one attempt at an item, doubling for each further retry (at most a minute).
    RETRY_PAUSE: Duration = {
        env: "NOTEBRIDGE_RETRY_PAUSE", flag: None, key: Some("retry.pause"), toml_number: false,
        default: DefaultValue::Value("500ms"), note: "", example: "500ms", parse: parse_duration,
    }
    /// The wait before an item whose attempt failed is tried again, doubling for each further attempt (at most 128 s).
    RETRY_BACKOFF: Duration = {
        env: "NOTEBRIDGE_RETRY_BACKOFF", flag: None, key: Some("retry.backoff"), toml_number: false,
        default: DefaultValue::Value("4s"), note: "", example: "4s", parse: parse_duration,
    }
    /// Drive requests (listings and section downloads from OneDrive or SharePoint) in flight per account.
    DRIVE_CONCURRENCY: u32 = {
        env: "NOTEBRIDGE_DRIVE_CONCURRENCY", flag: None, key: Some("drive.concurrency"),
        toml_number: true, default: DefaultValue::Value("4"), note: "", example: "4",
        parse: parse_concurrency,
    }
    /// How long an account's drive requests wait after a 429 or 503 that gave no `Retry-After`, doubling for each further one (at most 5 minutes).
    DRIVE_THROTTLE_WAIT: Duration = {
        env: "NOTEBRIDGE_DRIVE_THROTTLE_WAIT", flag: None, key: Some("drive.throttle_wait"),
        toml_number: false, default: DefaultValue::Value("10s"), note: "", example: "10s",
        parse: parse_duration,
    }
    /// Appends every HTTP exchange with the services, redacted, to this file (for a first real run).
    TRACE: PathBuf = {
        env: "NOTEBRIDGE_TRACE", flag: Some("--trace"), key: None, toml_number: false,
        default: DefaultValue::Unset, note: "", example: "/tmp/notebridge-trace.txt", parse: parse_path,
    }
    /// `1`: the trace holds bodies too, redacted and cut short.
    TRACE_BODIES: bool = {
        env: "NOTEBRIDGE_TRACE_BODIES", flag: None, key: None, toml_number: false,
        default: DefaultValue::Value("0"), note: "", example: "1", parse: parse_switch,
    }
    /// Which logs go to stderr (`tracing` filter syntax; `RUST_LOG` is read when it is unset; `-v`, `-vv` and `-q` when neither is set).
    LOG: String = {
        env: "NOTEBRIDGE_LOG", flag: None, key: None, toml_number: false,
        default: DefaultValue::Unset, note: "", example: "notebridge=debug,info", parse: parse_text,
    }
}

impl Decl {
    /// The README table's row for this setting.
    pub fn readme_row(&self) -> String {
        let env = match self.flag {
            Some(f) => format!("`{}` (`{f}`)", self.env),
            None => format!("`{}`", self.env),
        };
        let key = self.key.map_or("–".to_owned(), |k| format!("`{k}`"));
        let mut default = match self.default {
            DefaultValue::Value(v) | DefaultValue::Platform(v) => format!("`{v}`"),
            DefaultValue::Unset => "none".to_owned(),
        };
        if !self.note.is_empty() {
            default = format!("{default} {}", self.note);
        }
        let meaning = self.doc.trim().trim_end_matches('.');
        format!("| {env} | {key} | {default} | {meaning} |")
    }
}

/// The README's settings table, derived from [`ALL`].
pub fn readme_table() -> String {
    let mut out = String::from(
        "| env | config key (TOML) | default | meaning |\n| --- | --- | --- | --- |\n",
    );
    for d in ALL {
        out.push_str(&d.readme_row());
        out.push('\n');
    }
    out
}

fn parse_text(s: &str) -> Result<String, String> {
    Ok(s.to_owned())
}

fn parse_path(s: &str) -> Result<PathBuf, String> {
    Ok(PathBuf::from(s))
}

fn parse_url(s: &str) -> Result<String, String> {
    let u = url::Url::parse(s.trim()).map_err(|e| e.to_string())?;
    if !matches!(u.scheme(), "http" | "https") {
        return Err("must be an http(s) URL".into());
    }
    Ok(s.trim().trim_end_matches('/').to_owned())
}

fn parse_scopes(s: &str) -> Result<Vec<String>, String> {
    let scopes: Vec<String> = s.split_whitespace().map(str::to_owned).collect();
    if scopes.is_empty() {
        return Err("no scopes given".into());
    }
    Ok(scopes)
}

fn parse_concurrency(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err("not a whole number".into()),
    }
}

fn parse_workers(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) if n > 64 => Err("must be at most 64".into()),
        Ok(n) => Ok(n),
        Err(_) => Err("not a whole number".into()),
    }
}

fn parse_switch(s: &str) -> Result<bool, String> {
    match s.trim() {
        "1" => Ok(true),
        "0" => Ok(false),
        _ => Err("must be 1 or 0".into()),
    }
}

fn parse_share(s: &str) -> Result<BackgroundShare, String> {
    if s.trim().eq_ignore_ascii_case("auto") {
        return Ok(BackgroundShare::Auto);
    }
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| "not `auto` nor a number".to_owned())?;
    if !(v > 0.0 && v <= 1.0) {
        return Err("must be `auto`, or greater than 0 and at most 1".into());
    }
    Ok(BackgroundShare::Fixed(v))
}

fn parse_notion_pace(s: &str) -> Result<NotionPace, String> {
    if s.trim().eq_ignore_ascii_case("auto") {
        return Ok(NotionPace::Auto);
    }
    parse_one_window(s).map(NotionPace::Fixed)
}

fn parse_one_window(s: &str) -> Result<Window, String> {
    match parse_windows(s)?.as_slice() {
        [w] => Ok(*w),
        _ => Err("give exactly one COUNT/DURATION".into()),
    }
}

/// Why the settings could not be built. Every variant names the setting and where it came from.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// A value that does not parse or is out of range.
    #[error("invalid {setting} ({source_name}): {value:?}: {problem}; for example: {example}")]
    Invalid {
        /// The setting's name as the user wrote it (env var, `--flag` or `table.key`).
        setting: String,
        /// Where it came from ("environment", "config file /x/config.toml", "flag").
        source_name: String,
        /// The offending value.
        value: String,
        /// What is wrong with it.
        problem: String,
        /// A valid value.
        example: &'static str,
    },
    /// The config file could not be read or parsed (unknown keys included).
    #[error("config file {path}: {problem}")]
    ConfigFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// A required setting is missing.
    #[error("{0}")]
    Missing(String),
}

impl Classify for SettingsError {
    fn class(&self) -> Class {
        match self {
            SettingsError::Invalid { .. }
            | SettingsError::ConfigFile { .. }
            | SettingsError::Missing(_) => {
                Class::new(Scope::Run, Next::Never).means(Meaning::Usage)
            }
        }
    }
}

/// One sliding window: at most `count` requests in any span of `length`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Requests allowed in the window.
    pub count: u32,
    /// The window's length.
    pub length: Duration,
}

impl fmt::Display for Window {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.length.as_millis();
        if ms.is_multiple_of(3_600_000) {
            write!(f, "{}/{}h", self.count, ms / 3_600_000)
        } else if ms.is_multiple_of(1000) {
            write!(f, "{}/{}s", self.count, ms / 1000)
        } else {
            write!(f, "{}/{}ms", self.count, ms)
        }
    }
}

/// Parses `COUNT/DURATION[,COUNT/DURATION...]`, DURATION a number with unit ms, s, m or h.
pub fn parse_windows(text: &str) -> Result<Vec<Window>, String> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err("empty entry in the window list".into());
        }
        let (count, dur) = part
            .split_once('/')
            .ok_or_else(|| format!("{part:?} is not COUNT/DURATION"))?;
        let count: u32 = count
            .trim()
            .parse()
            .map_err(|_| format!("{:?} is not a whole number of requests", count.trim()))?;
        if count == 0 {
            return Err(format!("{part:?} allows zero requests"));
        }
        let length = parse_duration(dur.trim())?;
        if length.is_zero() {
            return Err(format!("{part:?} has a window of zero"));
        }
        out.push(Window { count, length });
    }
    Ok(out)
}

/// Parses a duration with unit ms, s, m or h (`500ms`, `60s`, `2m`, `1h`; fractions allowed: `1.5h`).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| format!("{text:?} has no unit (ms, s, m or h)"))?;
    let (num, unit) = text.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("{text:?} does not start with a number"))?;
    let ms_per = match unit.trim() {
        "ms" => 1.0,
        "s" => 1000.0,
        "m" => 60_000.0,
        "h" => 3_600_000.0,
        other => {
            return Err(format!(
                "unknown unit {other:?} in {text:?} (use ms, s, m or h)"
            ))
        }
    };
    let ms = n * ms_per;
    if !ms.is_finite() || ms < 0.0 {
        return Err(format!("{text:?} is not a valid duration"));
    }
    Ok(Duration::from_millis(ms.round() as u64))
}

/// How fast Notion requests go, per integration token.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NotionPace {
    /// Start at Notion's documented average and learn the connection's budget from its answers.
    Auto,
    /// Exactly this many requests per window, whatever Notion answers (429s still pause).
    Fixed(Window),
}

impl fmt::Display for NotionPace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotionPace::Auto => f.write_str("auto"),
            NotionPace::Fixed(w) => w.fmt(f),
        }
    }
}

/// How much of every window and cap background work (migration) may use.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BackgroundShare {
    /// Everything but a foreground reserve sized from the account's scans; background also yields
    /// while foreground work waits or is in flight.
    Auto,
    /// A fixed share in (0, 1] of every window and cap.
    Fixed(f64),
}

impl fmt::Display for BackgroundShare {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BackgroundShare::Auto => f.write_str("auto"),
            BackgroundShare::Fixed(v) => write!(f, "{v}"),
        }
    }
}

/// Graph throttling limits as the limiter models them.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphLimits {
    /// Windows per signed-in user.
    pub user_windows: Vec<Window>,
    /// In-flight requests per user.
    pub user_concurrency: u32,
    /// Windows for the whole app (all accounts in the database); empty: none.
    pub app_windows: Vec<Window>,
    /// In-flight requests for the whole app; `None`: no cap.
    pub app_concurrency: Option<u32>,
    /// What background work may use.
    pub background_share: BackgroundShare,
}

impl Default for GraphLimits {
    /// Only what Microsoft documents for delegated OneNote calls: the per-user windows and cap. The
    /// app-wide figures (240/60s, 800/3600s, 20 concurrent) are documented for app-only calls,
    /// which OneNote no longer accepts, so no app-wide limit applies unless configured.
    fn default() -> Self {
        Self {
            user_windows: decl::GRAPH_USER_LIMITS.default_value().unwrap_or_default(),
            user_concurrency: decl::GRAPH_USER_CONCURRENCY.default_value().unwrap_or(1),
            app_windows: decl::GRAPH_APP_LIMITS.default_value().unwrap_or_default(),
            app_concurrency: decl::GRAPH_APP_CONCURRENCY.default_value(),
            background_share: decl::BACKGROUND_SHARE
                .default_value()
                .unwrap_or(BackgroundShare::Auto),
        }
    }
}

/// Every resolved setting.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The SQLite state file.
    pub db_path: PathBuf,
    /// The config file that was read, if any.
    pub config_path: Option<PathBuf>,
    /// Entra app id; `None` until configured.
    pub client_id: Option<String>,
    /// Tenant segment of the authority URLs.
    pub tenant: String,
    /// Authority base URL, without trailing slash.
    pub authority_url: String,
    /// Graph base URL, without trailing slash.
    pub graph_url: String,
    /// Space-separated scopes.
    pub scopes: Vec<String>,
    /// Notion integration secret.
    pub notion_token: Option<String>,
    /// Notion API base URL, without trailing slash.
    pub notion_url: String,
    /// Graph limits.
    pub graph: GraphLimits,
    /// Notion request pace per integration token.
    pub notion_rate: NotionPace,
    /// Pages in flight per account during `migrate`.
    pub workers: usize,
    /// An item's retries: how many in all, and the pauses and backoffs between them.
    pub retries: RetryBudget,
    /// The pace of drive requests (OneDrive and SharePoint files), apart from OneNote's limits.
    pub drive: DriveLimits,
}

/// The pace of drive requests: their own cap and throttle wait, never the OneNote limiter's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DriveLimits {
    /// Drive requests in flight per account.
    pub concurrency: u32,
    /// The wait after a 429 or 503 without `Retry-After` (doubling for each further one).
    pub throttle_wait: Duration,
}

/// What the command line said about settings (the only flags the contract defines for them).
#[derive(Clone, Debug, Default)]
pub struct FlagSettings {
    /// `--db`.
    pub db: Option<PathBuf>,
    /// `--config`.
    pub config: Option<PathBuf>,
}

/// One layer's raw value and where it came from, for error messages.
struct Raw {
    value: String,
    source: String,
    name: String,
}

/// The environment and the config file, the layers below the flags.
struct Layers<'a> {
    env: &'a HashMap<String, String>,
    file: toml::Table,
    file_source: String,
}

impl Layers<'_> {
    fn env(&self, name: &str) -> Option<String> {
        self.env.get(name).filter(|v| !v.is_empty()).cloned()
    }

    /// The winning raw value of a setting: environment > config file.
    fn raw(&self, d: &Decl) -> Option<Raw> {
        if let Some(v) = self.env(d.env) {
            return Some(Raw {
                value: v,
                source: "environment".into(),
                name: d.env.into(),
            });
        }
        let key = d.key?;
        let (table, field) = key.split_once('.').expect("keys are table.key");
        let value = self.file.get(table)?.get(field)?;
        Some(Raw {
            value: match value {
                toml::Value::String(s) => s.clone(),
                other => other.to_string(),
            },
            source: self.file_source.clone(),
            name: key.into(),
        })
    }

    /// A setting's value from the environment or the file, parsed; `None` when neither sets it.
    fn get<T>(&self, s: &Setting<T>) -> Result<Option<T>, SettingsError> {
        self.raw(&s.decl)
            .map(|r| (s.parse)(&r.value).map_err(|problem| invalid(&r, &problem, s.decl.example)))
            .transpose()
    }

    /// A setting's value, or its default.
    fn get_or_default<T>(&self, s: &Setting<T>) -> Result<Option<T>, SettingsError> {
        Ok(self.get(s)?.or_else(|| s.default_value()))
    }
}

impl Settings {
    /// Resolves settings from the flags, the process environment and the config file.
    pub fn load(flags: &FlagSettings) -> Result<Self, SettingsError> {
        let env: HashMap<String, String> = std::env::vars().collect();
        Self::resolve(flags, &env, default_dirs())
    }

    /// Resolves settings from explicit inputs (the testable core of [`Settings::load`]).
    pub fn resolve(
        flags: &FlagSettings,
        env: &HashMap<String, String>,
        dirs: DefaultDirs,
    ) -> Result<Self, SettingsError> {
        let envv = |k: &str| env.get(k).filter(|v| !v.is_empty()).cloned();

        let (config_path, explicit_config) = match (&flags.config, envv(env::CONFIG)) {
            (Some(p), _) => (Some(p.clone()), true),
            (None, Some(p)) => (Some(PathBuf::from(p)), true),
            (None, None) => (dirs.config_file.filter(|p| p.exists()), false),
        };
        let file = match &config_path {
            Some(p) => read_config(p, explicit_config)?,
            None => toml::Table::new(),
        };
        let layers = Layers {
            env,
            file,
            file_source: config_path
                .as_ref()
                .map(|p| format!("config file {}", p.display()))
                .unwrap_or_default(),
        };

        let db_path = flags
            .db
            .clone()
            .or_else(|| envv(env::DB).map(PathBuf::from))
            .or(dirs.db_file)
            .ok_or_else(|| {
                SettingsError::Missing(format!(
                    "no place for the state database: set --db PATH or {}",
                    env::DB
                ))
            })?;

        // Every setting with a declared default has a value: `expect` states that, it cannot fail.
        let set = "declared with a default";
        Ok(Settings {
            db_path,
            config_path,
            client_id: layers.get(&decl::CLIENT_ID)?,
            tenant: layers.get_or_default(&decl::TENANT)?.expect(set),
            authority_url: layers.get_or_default(&decl::AUTHORITY_URL)?.expect(set),
            graph_url: layers.get_or_default(&decl::GRAPH_URL)?.expect(set),
            scopes: layers.get_or_default(&decl::SCOPES)?.expect(set),
            notion_token: layers.get(&decl::NOTION_TOKEN)?,
            notion_url: layers.get_or_default(&decl::NOTION_URL)?.expect(set),
            graph: GraphLimits {
                user_windows: layers.get_or_default(&decl::GRAPH_USER_LIMITS)?.expect(set),
                user_concurrency: layers
                    .get_or_default(&decl::GRAPH_USER_CONCURRENCY)?
                    .expect(set),
                app_windows: layers
                    .get_or_default(&decl::GRAPH_APP_LIMITS)?
                    .unwrap_or_default(),
                app_concurrency: layers.get_or_default(&decl::GRAPH_APP_CONCURRENCY)?,
                background_share: layers.get_or_default(&decl::BACKGROUND_SHARE)?.expect(set),
            },
            notion_rate: layers.get_or_default(&decl::NOTION_RATE)?.expect(set),
            workers: layers.get_or_default(&decl::WORKERS)?.expect(set),
            retries: RetryBudget {
                pause: layers.get_or_default(&decl::RETRY_PAUSE)?.expect(set),
                base: layers.get_or_default(&decl::RETRY_BACKOFF)?.expect(set),
                ..ITEM_RETRIES
            },
            drive: DriveLimits {
                concurrency: layers.get_or_default(&decl::DRIVE_CONCURRENCY)?.expect(set),
                throttle_wait: layers
                    .get_or_default(&decl::DRIVE_THROTTLE_WAIT)?
                    .expect(set),
            },
        })
    }
}

/// Where the platform keeps data and config files.
#[derive(Clone, Debug, Default)]
pub struct DefaultDirs {
    /// `<platform local data dir>/notebridge/notebridge.db`.
    pub db_file: Option<PathBuf>,
    /// `<platform config dir>/notebridge/config.toml`.
    pub config_file: Option<PathBuf>,
}

/// The platform's default locations. The state is in the *local* data folder: on Windows
/// `%LOCALAPPDATA%`, not the roaming `%APPDATA%` that a domain profile copies to a network share
/// at every log-on and log-off (a WAL database and section downloads must not roam); on Linux and
/// macOS the local and the roaming folder are one. The config file is small and roams.
pub fn default_dirs() -> DefaultDirs {
    DefaultDirs {
        db_file: crate::platform::local_data_dir()
            .map(|d| d.join("notebridge").join("notebridge.db")),
        config_file: crate::platform::config_dir()
            .map(|d| d.join("notebridge").join("config.toml")),
    }
}

fn read_config(path: &Path, explicit: bool) -> Result<toml::Table, SettingsError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !explicit => {
            return Ok(toml::Table::new())
        }
        Err(e) => {
            return Err(SettingsError::ConfigFile {
                path: path.to_owned(),
                problem: format!("cannot read it: {e}"),
            })
        }
    };
    let bad = |problem: String| SettingsError::ConfigFile {
        path: path.to_owned(),
        problem: format!("{problem}; {}", valid_keys()),
    };
    let table: toml::Table =
        toml::from_str(&text).map_err(|e| bad(e.to_string().trim_end().into()))?;
    // Unknown tables and keys are errors, so a typo never silently does nothing.
    for (name, value) in &table {
        let Some(fields) = value.as_table() else {
            return Err(bad(format!("unknown key `{name}` outside any table")));
        };
        for (field, value) in fields {
            let key = format!("{name}.{field}");
            let Some(d) = ALL.iter().find(|d| d.key == Some(key.as_str())) else {
                return Err(bad(
                    if ALL
                        .iter()
                        .any(|d| d.key.is_some_and(|k| k.starts_with(&format!("{name}."))))
                    {
                        format!("unknown key `{field}` in [{name}]")
                    } else {
                        format!("unknown table [{name}]")
                    },
                ));
            };
            let number = matches!(value, toml::Value::Integer(_) | toml::Value::Float(_));
            if !(value.is_str() || (number && d.toml_number)) {
                let want = if d.toml_number {
                    "a string or a number"
                } else {
                    "a string"
                };
                return Err(bad(format!(
                    "`{key}` must be {want}, not {}",
                    value.type_str()
                )));
            }
        }
    }
    Ok(table)
}

/// The tables and keys a config file may hold, from the declarations, with an example.
fn valid_keys() -> String {
    let mut tables: Vec<(&str, Vec<&str>)> = Vec::new();
    for key in ALL.iter().filter_map(|d| d.key) {
        let (table, field) = key.split_once('.').expect("keys are table.key");
        match tables.iter_mut().find(|(t, _)| *t == table) {
            Some((_, fields)) => fields.push(field),
            None => tables.push((table, vec![field])),
        }
    }
    let list: Vec<String> = tables
        .iter()
        .map(|(t, f)| format!("[{t}] {}", f.join(", ")))
        .collect();
    format!(
        "valid tables are {} (for example: [graph]\\nuser_limits = \"{}\")",
        list.join("; "),
        decl::GRAPH_USER_LIMITS.decl.example
    )
}

fn invalid(r: &Raw, problem: &str, example: &'static str) -> SettingsError {
    SettingsError::Invalid {
        setting: r.name.clone(),
        source_name: r.source.clone(),
        value: r.value.clone(),
        problem: problem.into(),
        example,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_database_is_in_the_platforms_local_data_folder() {
        let db = default_dirs().db_file.expect("a home folder");
        assert!(db.ends_with(Path::new("notebridge").join("notebridge.db")));
        let folder = db.parent().unwrap().parent().unwrap().to_owned();
        if cfg!(windows) {
            let local = std::env::var_os("LOCALAPPDATA").expect("LOCALAPPDATA");
            assert_eq!(folder, PathBuf::from(local), "not %APPDATA% (roaming)");
            assert!(
                folder.ends_with(Path::new("AppData").join("Local")),
                "{folder:?}"
            );
        } else if cfg!(target_os = "macos") {
            assert!(
                folder.ends_with("Library/Application Support"),
                "{folder:?}"
            );
        } else {
            let xdg = std::env::var_os("XDG_DATA_HOME").filter(|v| Path::new(v).is_absolute());
            match xdg {
                Some(x) => assert_eq!(folder, PathBuf::from(x)),
                None => assert!(folder.ends_with(".local/share"), "{folder:?}"),
            }
        }
    }

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn dirs(tmp: &Path) -> DefaultDirs {
        DefaultDirs {
            db_file: Some(tmp.join("data/notebridge.db")),
            config_file: Some(tmp.join("cfg/config.toml")),
        }
    }

    fn err_text(r: Result<Settings, SettingsError>) -> String {
        r.expect_err("should fail").to_string()
    }

    #[test]
    fn window_lists_parse_every_unit() {
        let w = parse_windows("120/60s,400/1h,30/500ms,5/2m").unwrap();
        assert_eq!(
            w,
            vec![
                Window {
                    count: 120,
                    length: Duration::from_secs(60)
                },
                Window {
                    count: 400,
                    length: Duration::from_secs(3600)
                },
                Window {
                    count: 30,
                    length: Duration::from_millis(500)
                },
                Window {
                    count: 5,
                    length: Duration::from_secs(120)
                },
            ]
        );
        assert_eq!(
            parse_windows("12/600ms,40/6s").unwrap()[1].length,
            Duration::from_secs(6)
        );
    }

    #[test]
    fn window_list_errors_are_specific() {
        for (bad, needle) in [
            ("", "empty entry"),
            ("120", "not COUNT/DURATION"),
            ("x/60s", "not a whole number"),
            ("0/60s", "zero requests"),
            ("10/0s", "window of zero"),
            ("10/60", "no unit"),
            ("10/60d", "unknown unit"),
            ("10/60s,", "empty entry"),
            ("-1/60s", "not a whole number"),
        ] {
            let e = parse_windows(bad).expect_err(bad);
            assert!(e.contains(needle), "{bad:?}: {e}");
        }
    }

    #[test]
    fn defaults_apply_without_any_input() {
        let t = tempfile::tempdir().unwrap();
        let s = Settings::resolve(&FlagSettings::default(), &env(&[]), dirs(t.path())).unwrap();
        assert_eq!(s.db_path, t.path().join("data/notebridge.db"));
        assert_eq!(s.tenant, "common");
        assert_eq!(s.graph, GraphLimits::default());
        assert_eq!(s.graph.user_windows[1].count, 400);
        assert_eq!(
            s.scopes,
            vec!["offline_access", "User.Read", "Notes.Read", "Files.Read"]
        );
        assert_eq!(s.notion_rate, NotionPace::Auto);
        assert!(s.client_id.is_none() && s.notion_token.is_none());
        assert_eq!(s.graph_url, "https://graph.microsoft.com/v1.0");
    }

    #[test]
    fn precedence_is_flag_then_env_then_file_then_default() {
        let t = tempfile::tempdir().unwrap();
        let cfg = t.path().join("c.toml");
        std::fs::write(
            &cfg,
            "[microsoft]\nclient_id = \"from-file\"\ntenant = \"file-tenant\"\n\
             [graph]\nuser_limits = \"10/1s\"\nuser_concurrency = 3\n[limiter]\nbackground_share = 0.25\n",
        )
        .unwrap();
        let e = env(&[
            (env::CONFIG, cfg.to_str().unwrap()),
            (env::CLIENT_ID, "from-env"),
            (env::DB, "/env/db.sqlite"),
        ]);
        // env beats file, file beats default
        let s = Settings::resolve(&FlagSettings::default(), &e, dirs(t.path())).unwrap();
        assert_eq!(s.client_id.as_deref(), Some("from-env"));
        assert_eq!(s.tenant, "file-tenant");
        assert_eq!(s.graph.user_windows, parse_windows("10/1s").unwrap());
        assert_eq!(s.graph.user_concurrency, 3);
        assert_eq!(s.graph.app_concurrency, None);
        assert_eq!(s.graph.background_share, BackgroundShare::Fixed(0.25));
        assert_eq!(s.db_path, PathBuf::from("/env/db.sqlite"));
        // flag beats env
        let flags = FlagSettings {
            db: Some("/flag/db.sqlite".into()),
            config: None,
        };
        let s = Settings::resolve(&flags, &e, dirs(t.path())).unwrap();
        assert_eq!(s.db_path, PathBuf::from("/flag/db.sqlite"));
        // --config beats NOTEBRIDGE_CONFIG
        let other = t.path().join("other.toml");
        std::fs::write(&other, "[microsoft]\ntenant = \"other\"\n").unwrap();
        let flags = FlagSettings {
            db: None,
            config: Some(other),
        };
        let s = Settings::resolve(&flags, &e, dirs(t.path())).unwrap();
        assert_eq!(s.tenant, "other");
    }

    #[test]
    fn default_config_file_is_read_when_present() {
        let t = tempfile::tempdir().unwrap();
        let d = dirs(t.path());
        std::fs::create_dir_all(d.config_file.as_ref().unwrap().parent().unwrap()).unwrap();
        std::fs::write(
            d.config_file.as_ref().unwrap(),
            "[notion]\nrate = \"2/1s\"\n",
        )
        .unwrap();
        let s = Settings::resolve(&FlagSettings::default(), &env(&[]), d).unwrap();
        assert_eq!(
            s.notion_rate,
            NotionPace::Fixed(Window {
                count: 2,
                length: Duration::from_secs(1)
            })
        );
    }

    #[test]
    fn every_bad_value_is_a_usage_error_naming_the_setting() {
        let t = tempfile::tempdir().unwrap();
        let cases: &[(&str, &str, &str)] = &[
            (env::GRAPH_USER_LIMITS, "120/0s", "120/60s,400/1h"),
            (env::GRAPH_APP_LIMITS, "lots", "120/60s,400/1h"),
            (env::GRAPH_USER_CONCURRENCY, "0", "for example: 5"),
            (env::GRAPH_APP_CONCURRENCY, "many", "for example: 5"),
            (env::BACKGROUND_SHARE, "0", "0.5"),
            (env::BACKGROUND_SHARE, "1.5", "0.5"),
            (env::BACKGROUND_SHARE, "-0.1", "0.5"),
            (env::BACKGROUND_SHARE, "half", "0.5"),
            (env::NOTION_RATE, "3/1s,10/1m", "3/1s"),
            (env::NOTION_RATE, "3/0ms", "3/1s"),
            (env::GRAPH_URL, "not a url", "https://"),
            (env::NOTION_URL, "ftp://x", "https://"),
            (env::AUTHORITY_URL, "::", "https://"),
            (env::SCOPES, "   ", "offline_access"),
        ];
        for (name, value, example) in cases {
            let r = Settings::resolve(
                &FlagSettings::default(),
                &env(&[(name, value)]),
                dirs(t.path()),
            );
            let e = r.expect_err(name);
            assert_eq!(e.meaning(), Some(Meaning::Usage));
            let text = e.to_string();
            assert!(text.contains(name), "{text}");
            assert!(text.contains("environment"), "{text}");
            assert!(text.contains(example), "{name}: {text}");
        }
        // the upper bound itself is allowed
        let s = Settings::resolve(
            &FlagSettings::default(),
            &env(&[(env::BACKGROUND_SHARE, "1")]),
            dirs(t.path()),
        )
        .unwrap();
        assert_eq!(s.graph.background_share, BackgroundShare::Fixed(1.0));
    }

    #[test]
    fn defaults_are_only_the_documented_per_user_limits() {
        let t = tempfile::tempdir().unwrap();
        let s = Settings::resolve(&FlagSettings::default(), &env(&[]), dirs(t.path())).unwrap();
        assert_eq!(
            s.graph.user_windows,
            parse_windows("120/60s,400/1h").unwrap()
        );
        assert_eq!(s.graph.user_concurrency, 5);
        assert!(s.graph.app_windows.is_empty(), "{:?}", s.graph.app_windows);
        assert_eq!(s.graph.app_concurrency, None);
        assert_eq!(s.graph.background_share, BackgroundShare::Auto);
        // Users may still set app-wide limits, and name `auto` in any case.
        let s = Settings::resolve(
            &FlagSettings::default(),
            &env(&[
                (env::GRAPH_APP_LIMITS, "240/60s,800/1h"),
                (env::GRAPH_APP_CONCURRENCY, "20"),
                (env::BACKGROUND_SHARE, " AUTO "),
            ]),
            dirs(t.path()),
        )
        .unwrap();
        assert_eq!(
            s.graph.app_windows,
            parse_windows("240/60s,800/3600s").unwrap()
        );
        assert_eq!(s.graph.app_concurrency, Some(20));
        assert_eq!(s.graph.background_share, BackgroundShare::Auto);
        let cfg = t.path().join("c.toml");
        std::fs::write(
            &cfg,
            "[limiter]\nbackground_share = \"auto\"\n[graph]\napp_concurrency = 7\n",
        )
        .unwrap();
        let flags = FlagSettings {
            db: None,
            config: Some(cfg),
        };
        let s = Settings::resolve(&flags, &env(&[]), dirs(t.path())).unwrap();
        assert_eq!(s.graph.background_share, BackgroundShare::Auto);
        assert_eq!(s.graph.app_concurrency, Some(7));
        assert!(s.graph.app_windows.is_empty());
    }

    #[test]
    fn config_file_errors_name_the_file_and_key() {
        let t = tempfile::tempdir().unwrap();
        let cfg = t.path().join("c.toml");
        let flags = FlagSettings {
            db: None,
            config: Some(cfg.clone()),
        };
        // unknown key
        std::fs::write(&cfg, "[graph]\nuser_limit = \"1/1s\"\n").unwrap();
        let text = err_text(Settings::resolve(&flags, &env(&[]), dirs(t.path())));
        assert!(
            text.contains("c.toml") && text.contains("user_limit"),
            "{text}"
        );
        // unknown table
        std::fs::write(&cfg, "[grahp]\nuser_limits = \"1/1s\"\n").unwrap();
        let text = err_text(Settings::resolve(&flags, &env(&[]), dirs(t.path())));
        assert!(text.contains("grahp"), "{text}");
        // bad value names the key and the file
        std::fs::write(&cfg, "[graph]\napp_limits = \"240/60\"\n").unwrap();
        let text = err_text(Settings::resolve(&flags, &env(&[]), dirs(t.path())));
        assert!(
            text.contains("graph.app_limits") && text.contains("c.toml"),
            "{text}"
        );
        std::fs::write(&cfg, "[limiter]\nbackground_share = 2\n").unwrap();
        let text = err_text(Settings::resolve(&flags, &env(&[]), dirs(t.path())));
        assert!(text.contains("limiter.background_share"), "{text}");
        // not TOML
        std::fs::write(&cfg, "this is = = not toml").unwrap();
        let text = err_text(Settings::resolve(&flags, &env(&[]), dirs(t.path())));
        assert!(text.contains("c.toml"), "{text}");
        // explicitly named but missing
        std::fs::remove_file(&cfg).unwrap();
        let text = err_text(Settings::resolve(&flags, &env(&[]), dirs(t.path())));
        assert!(text.contains("cannot read"), "{text}");
    }

    /// The README's settings table, as written there (the rows after its header).
    fn readme_rows() -> Vec<String> {
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
            .expect("README.md is beside Cargo.toml");
        let header = "| env | config key (TOML) | default | meaning |";
        let start = readme
            .lines()
            .position(|l| l.trim() == header)
            .expect("README has the settings table");
        readme
            .lines()
            .skip(start)
            .take_while(|l| l.starts_with('|'))
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn the_readme_settings_table_is_the_declarations() {
        let expected = readme_table();
        let written = readme_rows().join("\n") + "\n";
        assert!(
            written == expected,
            "README.md's settings table differs from the declarations in src/settings.rs; \
             replace it with:\n{expected}"
        );
    }

    #[test]
    fn every_variable_the_code_names_is_declared() {
        // A `"NOTEBRIDGE_..."` literal anywhere in the product is a variable it reads: each must be
        // in the table (and so in the README's).
        let mut dirs = vec![std::path::PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src"
        ))];
        let mut named = std::collections::BTreeSet::new();
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let path = e.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                for (i, _) in text.match_indices("\"NOTEBRIDGE_") {
                    let name: String = text[i + 1..]
                        .chars()
                        .take_while(|c| c.is_ascii_uppercase() || *c == '_')
                        .collect();
                    // This test's own pattern names no variable.
                    if !name.ends_with('_') {
                        named.insert(name);
                    }
                }
            }
        }
        assert!(named.len() >= 15, "{named:?}");
        let undeclared: Vec<&String> = named
            .iter()
            .filter(|n| !ALL.iter().any(|d| d.env == n.as_str()))
            .collect();
        assert!(
            undeclared.is_empty(),
            "not in the settings table: {undeclared:?}"
        );
    }

    #[test]
    fn each_setting_is_declared_once_with_a_default_that_parses() {
        let mut envs = std::collections::HashSet::new();
        let mut keys = std::collections::HashSet::new();
        for d in ALL {
            assert!(envs.insert(d.env), "{} declared twice", d.env);
            if let Some(k) = d.key {
                assert!(keys.insert(k), "{k} declared twice");
                assert!(k.split_once('.').is_some(), "{k} is table.key");
            }
            assert!(
                !d.doc.trim().is_empty() && !d.example.is_empty(),
                "{}",
                d.env
            );
        }
        assert_eq!(ALL.len(), 23);
        assert_eq!(env::GRAPH_USER_LIMITS, decl::GRAPH_USER_LIMITS.decl.env);
        // Each declared default is what an unset setting resolves to.
        let t = tempfile::tempdir().unwrap();
        let s = Settings::resolve(&FlagSettings::default(), &env(&[]), dirs(t.path())).unwrap();
        assert_eq!(Some(s.tenant), decl::TENANT.default_value());
        assert_eq!(Some(s.authority_url), decl::AUTHORITY_URL.default_value());
        assert_eq!(Some(s.graph_url), decl::GRAPH_URL.default_value());
        assert_eq!(Some(s.notion_url), decl::NOTION_URL.default_value());
        assert_eq!(Some(s.scopes), decl::SCOPES.default_value());
        assert_eq!(Some(s.notion_rate), decl::NOTION_RATE.default_value());
        assert_eq!(s.graph, GraphLimits::default());
        assert_eq!(decl::GRAPH_APP_CONCURRENCY.default_value(), None);
        assert_eq!(decl::CLIENT_ID.default_value(), None);
        assert_eq!(Some(s.workers), decl::WORKERS.default_value());
        assert_eq!(
            s.retries, ITEM_RETRIES,
            "the declared pauses are the policy's"
        );
        assert_eq!(decl::TRACE_BODIES.default_value(), Some(false));
        assert_eq!(decl::LOG.default_value(), None);
        assert_eq!(
            (Some(s.drive.concurrency), Some(s.drive.throttle_wait)),
            (
                decl::DRIVE_CONCURRENCY.default_value(),
                decl::DRIVE_THROTTLE_WAIT.default_value()
            )
        );
    }

    #[test]
    fn a_bad_value_shows_its_own_settings_example() {
        let t = tempfile::tempdir().unwrap();
        for (name, value, example) in [
            (env::AUTHORITY_URL, "::", decl::AUTHORITY_URL.decl.example),
            (env::NOTION_URL, "ftp://x", decl::NOTION_URL.decl.example),
            (env::NOTION_RATE, "3", decl::NOTION_RATE.decl.example),
            (env::NOTION_RATE, "fast", decl::NOTION_RATE.decl.example),
        ] {
            let e = Settings::resolve(
                &FlagSettings::default(),
                &env(&[(name, value)]),
                dirs(t.path()),
            )
            .expect_err(name)
            .to_string();
            assert!(e.contains(&format!("for example: {example}")), "{e}");
        }
        // The config file's own error names every table and key the declarations allow.
        let cfg = t.path().join("c.toml");
        std::fs::write(&cfg, "[microsoft]\ntenant = 5\n").unwrap();
        let flags = FlagSettings {
            db: None,
            config: Some(cfg.clone()),
        };
        let e = err_text(Settings::resolve(&flags, &env(&[]), dirs(t.path())));
        assert!(
            e.contains("`microsoft.tenant` must be a string, not integer"),
            "{e}"
        );
        for key in ALL.iter().filter_map(|d| d.key) {
            let field = key.split_once('.').unwrap().1;
            assert!(e.contains(field), "{field}: {e}");
        }
        std::fs::write(&cfg, "client_id = \"x\"\n").unwrap();
        let e = err_text(Settings::resolve(&flags, &env(&[]), dirs(t.path())));
        assert!(e.contains("outside any table"), "{e}");
    }

    #[test]
    fn trailing_slashes_are_trimmed() {
        let t = tempfile::tempdir().unwrap();
        let s = Settings::resolve(
            &FlagSettings::default(),
            &env(&[(env::GRAPH_URL, "http://127.0.0.1:9/v1.0/")]),
            dirs(t.path()),
        )
        .unwrap();
        assert_eq!(s.graph_url, "http://127.0.0.1:9/v1.0");
    }
}
