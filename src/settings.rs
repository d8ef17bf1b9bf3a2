//! Settings: every flag, environment variable and config key of the contract, merged in one fixed
//! order (flag > environment > config file > default) and validated before any work starts.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::failure::{Class, Classify, Meaning, Next, Scope};

/// Environment variable names, in one list so docs, tests and code agree.
pub mod env {
    /// State database path.
    pub const DB: &str = "NOTEBRIDGE_DB";
    /// Config file path.
    pub const CONFIG: &str = "NOTEBRIDGE_CONFIG";
    /// Entra app (public client) id.
    pub const CLIENT_ID: &str = "NOTEBRIDGE_CLIENT_ID";
    /// Tenant.
    pub const TENANT: &str = "NOTEBRIDGE_TENANT";
    /// Authority base URL.
    pub const AUTHORITY_URL: &str = "NOTEBRIDGE_AUTHORITY_URL";
    /// Graph base URL.
    pub const GRAPH_URL: &str = "NOTEBRIDGE_GRAPH_URL";
    /// Delegated scopes.
    pub const SCOPES: &str = "NOTEBRIDGE_SCOPES";
    /// Notion integration secret.
    pub const NOTION_TOKEN: &str = "NOTION_TOKEN";
    /// Notion API base URL.
    pub const NOTION_URL: &str = "NOTEBRIDGE_NOTION_URL";
    /// Per-user Graph windows.
    pub const GRAPH_USER_LIMITS: &str = "NOTEBRIDGE_GRAPH_USER_LIMITS";
    /// Per-user Graph concurrency.
    pub const GRAPH_USER_CONCURRENCY: &str = "NOTEBRIDGE_GRAPH_USER_CONCURRENCY";
    /// App-wide Graph windows.
    pub const GRAPH_APP_LIMITS: &str = "NOTEBRIDGE_GRAPH_APP_LIMITS";
    /// App-wide Graph concurrency.
    pub const GRAPH_APP_CONCURRENCY: &str = "NOTEBRIDGE_GRAPH_APP_CONCURRENCY";
    /// Background lane share.
    pub const BACKGROUND_SHARE: &str = "NOTEBRIDGE_BACKGROUND_SHARE";
    /// Notion request rate.
    pub const NOTION_RATE: &str = "NOTEBRIDGE_NOTION_RATE";
    /// Log filter (RUST_LOG is honoured too).
    pub const LOG: &str = "NOTEBRIDGE_LOG";
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
        if ms % 3_600_000 == 0 {
            write!(f, "{}/{}h", self.count, ms / 3_600_000)
        } else if ms % 1000 == 0 {
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

/// The config file's shape. Unknown keys are rejected so a typo never silently does nothing.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    microsoft: MicrosoftSection,
    #[serde(default)]
    notion: NotionSection,
    #[serde(default)]
    graph: GraphSection,
    #[serde(default)]
    limiter: LimiterSection,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct MicrosoftSection {
    client_id: Option<String>,
    tenant: Option<String>,
    authority_url: Option<String>,
    graph_url: Option<String>,
    scopes: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct NotionSection {
    token: Option<String>,
    api_url: Option<String>,
    rate: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct GraphSection {
    user_limits: Option<String>,
    user_concurrency: Option<toml::Value>,
    app_limits: Option<String>,
    app_concurrency: Option<toml::Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct LimiterSection {
    background_share: Option<toml::Value>,
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
            user_windows: parse_windows(DEFAULT_USER_LIMITS).expect("default parses"),
            user_concurrency: 5,
            app_windows: Vec::new(),
            app_concurrency: None,
            background_share: BackgroundShare::Auto,
        }
    }
}

const DEFAULT_USER_LIMITS: &str = "120/60s,400/3600s";

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
    /// Notion request rate (requests per window).
    pub notion_rate: Window,
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
            None => ConfigFile::default(),
        };
        let config_source = config_path
            .as_ref()
            .map(|p| format!("config file {}", p.display()))
            .unwrap_or_default();

        // flag > env > config > default, remembering where the winner came from.
        let pick = |env_name: &str, key: &str, cfg: Option<String>| -> Option<Raw> {
            if let Some(v) = envv(env_name) {
                return Some(Raw {
                    value: v,
                    source: "environment".into(),
                    name: env_name.into(),
                });
            }
            cfg.map(|v| Raw {
                value: v,
                source: config_source.clone(),
                name: key.into(),
            })
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

        let ms = file.microsoft;
        let client_id = pick(env::CLIENT_ID, "microsoft.client_id", ms.client_id).map(|r| r.value);
        let tenant = pick(env::TENANT, "microsoft.tenant", ms.tenant)
            .map(|r| r.value)
            .unwrap_or_else(|| "common".into());
        let authority_url = url_setting(
            pick(
                env::AUTHORITY_URL,
                "microsoft.authority_url",
                ms.authority_url,
            ),
            "https://login.microsoftonline.com",
        )?;
        let graph_url = url_setting(
            pick(env::GRAPH_URL, "microsoft.graph_url", ms.graph_url),
            "https://graph.microsoft.com/v1.0",
        )?;
        let scopes_raw = pick(env::SCOPES, "microsoft.scopes", ms.scopes);
        let scopes: Vec<String> = match &scopes_raw {
            Some(r) => {
                let s: Vec<String> = r.value.split_whitespace().map(str::to_owned).collect();
                if s.is_empty() {
                    return Err(invalid(
                        r,
                        "no scopes given",
                        "offline_access User.Read Notes.Read",
                    ));
                }
                s
            }
            None => vec![
                "offline_access".into(),
                "User.Read".into(),
                "Notes.Read".into(),
            ],
        };

        let ns = file.notion;
        let notion_token = pick(env::NOTION_TOKEN, "notion.token", ns.token).map(|r| r.value);
        let notion_url = url_setting(
            pick(env::NOTION_URL, "notion.api_url", ns.api_url),
            "https://api.notion.com",
        )?;
        let notion_rate = match pick(env::NOTION_RATE, "notion.rate", ns.rate) {
            Some(r) => {
                let w = parse_windows(&r.value).map_err(|p| invalid(&r, &p, "3/1s"))?;
                if w.len() != 1 {
                    return Err(invalid(&r, "give exactly one COUNT/DURATION", "3/1s"));
                }
                w[0]
            }
            None => Window {
                count: 3,
                length: Duration::from_secs(1),
            },
        };

        let gs = file.graph;
        let windows = |raw: Option<Raw>, default: &str| -> Result<Vec<Window>, SettingsError> {
            match raw {
                Some(r) => parse_windows(&r.value).map_err(|p| invalid(&r, &p, "120/60s,400/1h")),
                None => Ok(parse_windows(default).expect("default parses")),
            }
        };
        let user_windows = windows(
            pick(env::GRAPH_USER_LIMITS, "graph.user_limits", gs.user_limits),
            DEFAULT_USER_LIMITS,
        )?;
        let app_windows = match pick(env::GRAPH_APP_LIMITS, "graph.app_limits", gs.app_limits) {
            Some(r) => windows(Some(r), "")?,
            None => Vec::new(),
        };
        let user_concurrency = concurrency(
            pick(
                env::GRAPH_USER_CONCURRENCY,
                "graph.user_concurrency",
                gs.user_concurrency.map(toml_scalar),
            ),
            5,
        )?;
        let app_concurrency = match pick(
            env::GRAPH_APP_CONCURRENCY,
            "graph.app_concurrency",
            gs.app_concurrency.map(toml_scalar),
        ) {
            Some(r) => Some(concurrency(Some(r), 0)?),
            None => None,
        };
        let background_share = match pick(
            env::BACKGROUND_SHARE,
            "limiter.background_share",
            file.limiter.background_share.map(toml_scalar),
        ) {
            Some(r) if r.value.trim().eq_ignore_ascii_case("auto") => BackgroundShare::Auto,
            Some(r) => {
                let v: f64 = r
                    .value
                    .trim()
                    .parse()
                    .map_err(|_| invalid(&r, "not `auto` nor a number", "auto or 0.5"))?;
                if !(v > 0.0 && v <= 1.0) {
                    return Err(invalid(
                        &r,
                        "must be `auto`, or greater than 0 and at most 1",
                        "auto or 0.5",
                    ));
                }
                BackgroundShare::Fixed(v)
            }
            None => BackgroundShare::Auto,
        };

        Ok(Settings {
            db_path,
            config_path,
            client_id,
            tenant,
            authority_url,
            graph_url,
            scopes,
            notion_token,
            notion_url,
            graph: GraphLimits {
                user_windows,
                user_concurrency,
                app_windows,
                app_concurrency,
                background_share,
            },
            notion_rate,
        })
    }
}

/// Where the platform keeps data and config files.
#[derive(Clone, Debug, Default)]
pub struct DefaultDirs {
    /// `<platform data dir>/notebridge/notebridge.db`.
    pub db_file: Option<PathBuf>,
    /// `<platform config dir>/notebridge/config.toml`.
    pub config_file: Option<PathBuf>,
}

/// The platform's default locations.
pub fn default_dirs() -> DefaultDirs {
    match directories::BaseDirs::new() {
        Some(b) => DefaultDirs {
            db_file: Some(b.data_dir().join("notebridge").join("notebridge.db")),
            config_file: Some(b.config_dir().join("notebridge").join("config.toml")),
        },
        None => DefaultDirs::default(),
    }
}

fn read_config(path: &Path, explicit: bool) -> Result<ConfigFile, SettingsError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !explicit => {
            return Ok(ConfigFile::default())
        }
        Err(e) => {
            return Err(SettingsError::ConfigFile {
                path: path.to_owned(),
                problem: format!("cannot read it: {e}"),
            })
        }
    };
    toml::from_str(&text).map_err(|e| SettingsError::ConfigFile {
        path: path.to_owned(),
        problem: format!(
            "{}; valid tables are [microsoft] client_id, tenant, authority_url, graph_url, scopes; \
             [notion] token, api_url, rate; [graph] user_limits, user_concurrency, app_limits, \
             app_concurrency; [limiter] background_share (for example: [graph]\\nuser_limits = \"120/60s,400/1h\")",
            e.to_string().trim_end()
        ),
    })
}

fn toml_scalar(v: toml::Value) -> String {
    match v {
        toml::Value::String(s) => s,
        other => other.to_string(),
    }
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

fn concurrency(raw: Option<Raw>, default: u32) -> Result<u32, SettingsError> {
    match raw {
        Some(r) => match r.value.trim().parse::<u32>() {
            Ok(0) => Err(invalid(&r, "must be at least 1", "5")),
            Ok(n) => Ok(n),
            Err(_) => Err(invalid(&r, "not a whole number", "5")),
        },
        None => Ok(default),
    }
}

fn url_setting(raw: Option<Raw>, default: &str) -> Result<String, SettingsError> {
    match raw {
        Some(r) => {
            let u = url::Url::parse(r.value.trim())
                .map_err(|e| invalid(&r, &e.to_string(), "https://graph.microsoft.com/v1.0"))?;
            if !matches!(u.scheme(), "http" | "https") {
                return Err(invalid(
                    &r,
                    "must be an http(s) URL",
                    "https://graph.microsoft.com/v1.0",
                ));
            }
            Ok(r.value.trim().trim_end_matches('/').to_owned())
        }
        None => Ok(default.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(s.scopes, vec!["offline_access", "User.Read", "Notes.Read"]);
        assert_eq!(s.notion_rate.count, 3);
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
        assert_eq!(s.notion_rate.count, 2);
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
