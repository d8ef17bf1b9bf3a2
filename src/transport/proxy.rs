//! Which proxy a request goes through: decided from the environment's variables and the system's
//! proxy settings, both read once and passed in, so the choice is a pure function of them (what
//! the clients do and what `doctor` says are the same call).
//!
//! The rules, in order:
//! 1. The environment beats the system: when any of `HTTPS_PROXY`, `HTTP_PROXY` or `ALL_PROXY`
//!    (or their lower-case forms) is set, the system's settings are not read for proxies at all;
//!    otherwise the system's (Windows Internet settings, macOS network settings) are used.
//! 2. `NO_PROXY` (or `no_proxy`) from the environment, when set, says which hosts go direct for
//!    whichever proxy was chosen; otherwise the system's own bypass list does, for its proxy.
//! 3. An `https://` destination takes the https proxy, an `http://` one the http proxy (`ALL_PROXY`
//!    stands in for either); none for its scheme means direct.

use std::net::IpAddr;

use url::Url;

/// Where a proxy setting was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The process's environment variables.
    Env,
    /// The operating system's proxy settings.
    System,
}

impl Origin {
    /// The name shown to people.
    pub fn name(self) -> &'static str {
        match self {
            Origin::Env => "the environment",
            Origin::System => "the system's proxy settings",
        }
    }
}

/// One setting: its value and the name it was read under (`HTTPS_PROXY`, `ProxyServer`, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    /// The variable's or the system setting's name.
    pub name: &'static str,
    /// Its value as read.
    pub value: String,
}

impl Setting {
    fn new(name: &'static str, value: impl Into<String>) -> Self {
        Setting {
            name,
            value: value.into(),
        }
    }
}

/// The proxy settings of one origin.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProxySettings {
    /// The proxy for `http://` destinations.
    pub http: Option<Setting>,
    /// The proxy for `https://` destinations.
    pub https: Option<Setting>,
    /// The hosts that go direct (`NO_PROXY` syntax: comma-separated).
    pub bypass: Option<Setting>,
    /// A proxy auto-config script the system names, which notebridge does not run.
    pub auto_config: Option<Setting>,
}

impl ProxySettings {
    /// The environment's settings, read through `get` (the process's environment in the product,
    /// a map in tests). Empty values count as unset.
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Self {
        let first = |names: &[&'static str]| {
            names.iter().find_map(|&n| {
                get(n)
                    .filter(|v| !v.trim().is_empty())
                    .map(|v| Setting::new(n, v))
            })
        };
        let all = first(&["ALL_PROXY", "all_proxy"]);
        ProxySettings {
            http: first(&["HTTP_PROXY", "http_proxy"]).or_else(|| all.clone()),
            https: first(&["HTTPS_PROXY", "https_proxy"]).or(all),
            bypass: first(&["NO_PROXY", "no_proxy"]),
            auto_config: None,
        }
    }

    /// Windows's Internet settings (`ProxyEnable`, `ProxyServer`, `ProxyOverride`, `AutoConfigURL`
    /// under `HKCU\Software\Microsoft\Windows\CurrentVersion\Internet Settings`), as read from the
    /// registry. `ProxyServer` is either one `host:port` for every scheme or per-scheme entries
    /// (`http=host:port;https=host:port`); `ProxyOverride` is `;`-separated, with `*` wildcards and
    /// `<local>` (names without a dot).
    pub fn from_windows(
        enabled: bool,
        server: Option<&str>,
        overrides: Option<&str>,
        auto_config: Option<&str>,
    ) -> Self {
        let auto_config = auto_config
            .filter(|v| !v.trim().is_empty())
            .map(|v| Setting::new("AutoConfigURL", v.trim()));
        let server = server.map(str::trim).filter(|s| !s.is_empty());
        let (Some(server), true) = (server, enabled) else {
            return ProxySettings {
                auto_config,
                ..Default::default()
            };
        };
        let (mut http, mut https) = (None, None);
        if server.contains('=') {
            for entry in server.split(';') {
                match entry.trim().split_once('=') {
                    Some((scheme, addr)) if scheme.trim().eq_ignore_ascii_case("http") => {
                        http = Some(Setting::new("ProxyServer", addr.trim()));
                    }
                    Some((scheme, addr)) if scheme.trim().eq_ignore_ascii_case("https") => {
                        https = Some(Setting::new("ProxyServer", addr.trim()));
                    }
                    _ => {}
                }
            }
        } else {
            http = Some(Setting::new("ProxyServer", server));
            https = http.clone();
        }
        let bypass = overrides
            .map(|o| {
                o.split(';')
                    .map(str::trim)
                    .filter(|e| !e.is_empty())
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .filter(|o| !o.is_empty())
            .map(|o| Setting::new("ProxyOverride", o));
        ProxySettings {
            http,
            https,
            bypass,
            auto_config,
        }
    }

    /// macOS's network settings (`SCDynamicStoreCopyProxies`): each scheme's proxy when it is
    /// enabled, and the exceptions list.
    pub fn from_macos(
        http: Option<(&str, Option<i32>)>,
        https: Option<(&str, Option<i32>)>,
        exceptions: &[String],
        auto_config: Option<&str>,
    ) -> Self {
        let addr = |name: &'static str, p: Option<(&str, Option<i32>)>| {
            let (host, port) = p?;
            let host = host.trim();
            if host.is_empty() {
                return None;
            }
            Some(Setting::new(
                name,
                match port {
                    Some(port) => format!("{host}:{port}"),
                    None => host.to_owned(),
                },
            ))
        };
        let exceptions: Vec<&str> = exceptions
            .iter()
            .map(|e| e.trim())
            .filter(|e| !e.is_empty())
            .collect();
        ProxySettings {
            http: addr("HTTPProxy", http),
            https: addr("HTTPSProxy", https),
            bypass: (!exceptions.is_empty())
                .then(|| Setting::new("ExceptionsList", exceptions.join(","))),
            auto_config: auto_config
                .filter(|v| !v.trim().is_empty())
                .map(|v| Setting::new("ProxyAutoConfigURLString", v.trim())),
        }
    }

    /// Whether these settings name a proxy for some scheme.
    pub fn names_a_proxy(&self) -> bool {
        self.http.is_some() || self.https.is_some()
    }
}

/// Why a request goes direct.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Direct {
    /// No proxy is set for its scheme anywhere that counts.
    NoneSet,
    /// The bypass list (`NO_PROXY`, `ProxyOverride`, ...) names its host.
    Bypassed {
        /// The list's name.
        name: &'static str,
        /// Where it was read.
        origin: Origin,
    },
    /// The proxy set for its scheme is not a usable `http://` or `https://` address.
    Unusable {
        /// The setting's name.
        name: &'static str,
        /// Where it was read.
        origin: Origin,
    },
}

/// How one request goes out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    /// Straight to the destination.
    Direct(Direct),
    /// Through a proxy.
    Proxy {
        /// The proxy's address (credentials, when the setting has them, included).
        url: Url,
        /// The setting's name.
        name: &'static str,
        /// Where it was read.
        origin: Origin,
    },
}

impl Route {
    /// The proxy to hand the HTTP client, if any.
    pub fn proxy(&self) -> Option<&Url> {
        match self {
            Route::Proxy { url, .. } => Some(url),
            Route::Direct(_) => None,
        }
    }

    /// One line for people, without any credentials the proxy's address holds.
    pub fn describe(&self) -> String {
        match self {
            Route::Direct(Direct::NoneSet) => "direct (no proxy set)".into(),
            Route::Direct(Direct::Bypassed { name, origin }) => {
                format!("direct ({name} from {} names the host)", origin.name())
            }
            Route::Direct(Direct::Unusable { name, origin }) => format!(
                "direct: {name} from {} is not an http:// or https:// proxy address",
                origin.name()
            ),
            Route::Proxy { url, name, origin } => {
                let mut shown = url.clone();
                // Neither fails for an http(s) URL with a host, which a proxy's always is.
                let _ = shown.set_username("");
                let _ = shown.set_password(None);
                format!(
                    "through the proxy {} ({name} from {})",
                    shown.as_str().trim_end_matches('/'),
                    origin.name()
                )
            }
        }
    }
}

/// How a request to `dest` goes out, given the environment's and the system's settings.
pub fn route(env: &ProxySettings, system: &ProxySettings, dest: &Url) -> Route {
    let (chosen, origin) = if env.names_a_proxy() {
        (env, Origin::Env)
    } else if system.names_a_proxy() {
        (system, Origin::System)
    } else {
        return Route::Direct(Direct::NoneSet);
    };
    let bypass = match &env.bypass {
        Some(b) => Some((b, Origin::Env)),
        None => chosen.bypass.as_ref().map(|b| (b, origin)),
    };
    if let Some((list, from)) = bypass {
        if bypassed(&list.value, dest) {
            return Route::Direct(Direct::Bypassed {
                name: list.name,
                origin: from,
            });
        }
    }
    let setting = match dest.scheme() {
        "https" => chosen.https.as_ref(),
        "http" => chosen.http.as_ref(),
        _ => None,
    };
    let Some(setting) = setting else {
        return Route::Direct(Direct::NoneSet);
    };
    match proxy_url(&setting.value) {
        Some(url) => Route::Proxy {
            url,
            name: setting.name,
            origin,
        },
        None => Route::Direct(Direct::Unusable {
            name: setting.name,
            origin,
        }),
    }
}

/// A proxy setting as an address: `host:port` means `http://host:port`, as curl reads it.
fn proxy_url(value: &str) -> Option<Url> {
    let value = value.trim();
    let url = if value.contains("://") {
        Url::parse(value).ok()?
    } else {
        Url::parse(&format!("http://{value}")).ok()?
    };
    (matches!(url.scheme(), "http" | "https") && url.host().is_some()).then_some(url)
}

/// Whether the bypass list `list` names `dest`'s host. Entries, comma-separated, are: `*` (every
/// host); `<local>` (a name without a dot, as Windows means it); an IP address or a network
/// (`10.0.0.0/8`); a pattern with `*` wildcards (`*.contoso.com`, `10.*`); otherwise a domain,
/// which also names its subdomains (`contoso.com` and `.contoso.com` alike). An entry may end in
/// `:port`, and then names that port only. Letter case does not matter.
pub fn bypassed(list: &str, dest: &Url) -> bool {
    let Some(host) = dest.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let host = host.to_ascii_lowercase();
    let ip: Option<IpAddr> = host.parse().ok();
    let port = dest.port_or_known_default();
    list.split(',')
        .map(|e| e.trim().to_ascii_lowercase())
        .filter(|e| !e.is_empty())
        .any(|entry| entry_names(&entry, &host, ip, port))
}

fn entry_names(entry: &str, host: &str, ip: Option<IpAddr>, port: Option<u16>) -> bool {
    if entry == "*" {
        return true;
    }
    if entry == "<local>" {
        return ip.is_none() && !host.contains('.');
    }
    if let Some(net) = network(entry) {
        return ip.is_some_and(|ip| net.contains(ip));
    }
    // An entry's own port, when it has one (`[::1]:8080`, `host:8080`).
    let (entry, entry_port) = match entry.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(':') && p.parse::<u16>().is_ok() => (
            h.trim_start_matches('[').trim_end_matches(']'),
            p.parse().ok(),
        ),
        _ => (entry, None),
    };
    if entry_port.is_some() && entry_port != port {
        return false;
    }
    if let Some(net) = network(entry) {
        return ip.is_some_and(|ip| net.contains(ip));
    }
    if entry.contains('*') {
        return glob(entry.as_bytes(), host.as_bytes());
    }
    let domain = entry.trim_start_matches('.');
    !domain.is_empty()
        && (host == domain
            || host
                .strip_suffix(domain)
                .is_some_and(|rest| rest.ends_with('.')))
}

/// An address or network (`a.b.c.d`, `a.b.c.d/n`, IPv6 alike).
struct Network {
    addr: IpAddr,
    bits: u32,
}

fn network(entry: &str) -> Option<Network> {
    let (addr, bits) = match entry.split_once('/') {
        Some((a, b)) => (a, Some(b.parse::<u32>().ok()?)),
        None => (entry, None),
    };
    let addr: IpAddr = addr.parse().ok()?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    let bits = bits.unwrap_or(max);
    (bits <= max).then_some(Network { addr, bits })
}

impl Network {
    fn contains(&self, ip: IpAddr) -> bool {
        let mask = |bits: u32, width: u32| -> u128 {
            if bits == 0 {
                0
            } else {
                (!0u128) << (width - bits)
            }
        };
        match (self.addr, ip) {
            (IpAddr::V4(n), IpAddr::V4(a)) => {
                let m = mask(self.bits, 32) as u32;
                u32::from(n) & m == u32::from(a) & m
            }
            (IpAddr::V6(n), IpAddr::V6(a)) => {
                let m = mask(self.bits, 128);
                u128::from(n) & m == u128::from(a) & m
            }
            _ => false,
        }
    }
}

/// `*` matches any run of characters, everything else itself.
fn glob(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => (0..=text.len()).any(|i| glob(rest, &text[i..])),
        Some((c, rest)) => text.first() == Some(c) && glob(rest, &text[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(vars: &[(&str, &str)]) -> ProxySettings {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ProxySettings::from_env(|k| map.get(k).cloned())
    }

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    const GRAPH: &str = "https://graph.microsoft.com/v1.0/me";

    fn windows_proxy() -> ProxySettings {
        ProxySettings::from_windows(
            true,
            Some("corp-proxy:8080"),
            Some("*.contoso.com;10.*;<local>"),
            None,
        )
    }

    #[test]
    fn nothing_set_is_direct() {
        let r = route(&env(&[]), &ProxySettings::default(), &url(GRAPH));
        assert_eq!(r, Route::Direct(Direct::NoneSet));
        assert_eq!(r.describe(), "direct (no proxy set)");
    }

    #[test]
    fn the_environment_beats_the_system() {
        let e = env(&[("HTTPS_PROXY", "http://envproxy:3128")]);
        let r = route(&e, &windows_proxy(), &url(GRAPH));
        assert_eq!(r.proxy(), Some(&url("http://envproxy:3128")));
        assert!(matches!(
            r,
            Route::Proxy {
                name: "HTTPS_PROXY",
                origin: Origin::Env,
                ..
            }
        ));
        // Even a scheme the environment leaves unset does not fall back to the system's proxy.
        let r = route(&e, &windows_proxy(), &url("http://intranet.example/"));
        assert_eq!(r, Route::Direct(Direct::NoneSet));
    }

    #[test]
    fn the_system_is_used_when_the_environment_names_no_proxy() {
        let r = route(&env(&[]), &windows_proxy(), &url(GRAPH));
        assert_eq!(r.proxy(), Some(&url("http://corp-proxy:8080")));
        assert!(matches!(
            r,
            Route::Proxy {
                name: "ProxyServer",
                origin: Origin::System,
                ..
            }
        ));
        // NO_PROXY alone (no proxy in the environment) still counts, for the system's proxy.
        let e = env(&[("NO_PROXY", "microsoft.com")]);
        assert_eq!(
            route(&e, &windows_proxy(), &url(GRAPH)),
            Route::Direct(Direct::Bypassed {
                name: "NO_PROXY",
                origin: Origin::Env
            })
        );
    }

    #[test]
    fn no_proxy_sends_the_hosts_it_names_direct() {
        let e = env(&[
            ("HTTPS_PROXY", "http://p:1"),
            ("HTTP_PROXY", "http://p:1"),
            (
                "NO_PROXY",
                "127.0.0.1, .contoso.com,notion.com,10.0.0.0/8,::1",
            ),
        ]);
        let none = ProxySettings::default();
        for direct in [
            "http://127.0.0.1:4000/x",
            "https://contoso.com/",
            "https://api.sub.contoso.com/",
            "https://notion.com/",
            "https://api.notion.com/v1",
            "https://10.1.2.3/",
            "http://[::1]:80/",
        ] {
            assert!(
                matches!(
                    route(&e, &none, &url(direct)),
                    Route::Direct(Direct::Bypassed { .. })
                ),
                "{direct}"
            );
        }
        for proxied in [
            GRAPH,
            "http://127.0.0.2/",
            "https://notcontoso.com/",
            "https://11.0.0.1/",
            "https://notion.com.evil.test/",
        ] {
            assert!(
                route(&e, &none, &url(proxied)).proxy().is_some(),
                "{proxied}"
            );
        }
        let all = env(&[("HTTPS_PROXY", "http://p:1"), ("NO_PROXY", "*")]);
        assert!(route(&all, &none, &url(GRAPH)).proxy().is_none());
    }

    #[test]
    fn the_systems_bypass_list_applies_to_its_proxy_unless_no_proxy_is_set() {
        let sys = windows_proxy();
        for direct in [
            "https://sp.contoso.com/",
            "http://10.9.8.7/",
            "http://intranet/",
        ] {
            assert_eq!(
                route(&env(&[]), &sys, &url(direct)),
                Route::Direct(Direct::Bypassed {
                    name: "ProxyOverride",
                    origin: Origin::System
                }),
                "{direct}"
            );
        }
        let e = env(&[("NO_PROXY", "example.org")]);
        assert!(route(&e, &sys, &url("https://sp.contoso.com/"))
            .proxy()
            .is_some());
    }

    #[test]
    fn lower_case_and_all_proxy_variables_count() {
        let e = env(&[("https_proxy", "proxy.corp:8080")]);
        assert_eq!(
            route(&e, &ProxySettings::default(), &url(GRAPH)).proxy(),
            Some(&url("http://proxy.corp:8080"))
        );
        let e = env(&[("ALL_PROXY", "http://all:1"), ("HTTPS_PROXY", "")]);
        assert_eq!(
            route(&e, &ProxySettings::default(), &url(GRAPH)).proxy(),
            Some(&url("http://all:1"))
        );
        assert_eq!(
            route(&e, &ProxySettings::default(), &url("http://x.test/")).proxy(),
            Some(&url("http://all:1"))
        );
    }

    #[test]
    fn per_scheme_windows_servers_and_disabled_settings() {
        let sys =
            ProxySettings::from_windows(true, Some("http=h:80;https=s:443;ftp=f:21"), None, None);
        assert_eq!(
            route(&env(&[]), &sys, &url(GRAPH)).proxy(),
            Some(&url("http://s:443"))
        );
        assert_eq!(
            route(&env(&[]), &sys, &url("http://a.test/")).proxy(),
            Some(&url("http://h:80"))
        );
        let off = ProxySettings::from_windows(false, Some("corp:8080"), None, Some("http://pac/"));
        assert!(!off.names_a_proxy());
        assert_eq!(off.auto_config.unwrap().value, "http://pac/");
    }

    #[test]
    fn macos_settings_with_their_exceptions() {
        let sys = ProxySettings::from_macos(
            None,
            Some(("proxy.corp", Some(3128))),
            &["*.local".into(), "169.254/16".into(), "intra.corp".into()],
            None,
        );
        assert_eq!(
            route(&env(&[]), &sys, &url(GRAPH)).proxy(),
            Some(&url("http://proxy.corp:3128"))
        );
        assert!(route(&env(&[]), &sys, &url("https://wiki.intra.corp/"))
            .proxy()
            .is_none());
        assert_eq!(
            route(&env(&[]), &sys, &url("http://a.test/")),
            Route::Direct(Direct::NoneSet)
        );
    }

    #[test]
    fn an_unusable_proxy_is_named_and_credentials_are_never_shown() {
        let e = env(&[("HTTPS_PROXY", "socks5://p:1080")]);
        let r = route(&e, &ProxySettings::default(), &url(GRAPH));
        assert_eq!(
            r,
            Route::Direct(Direct::Unusable {
                name: "HTTPS_PROXY",
                origin: Origin::Env
            })
        );
        let e = env(&[("HTTPS_PROXY", "http://alice:s3cret@p.corp:8080")]);
        let r = route(&e, &ProxySettings::default(), &url(GRAPH));
        assert_eq!(r.proxy().unwrap().password(), Some("s3cret"));
        let shown = r.describe();
        assert!(
            !shown.contains("s3cret") && !shown.contains("alice"),
            "{shown}"
        );
        assert!(shown.contains("http://p.corp:8080"), "{shown}");
    }

    #[test]
    fn entries_with_a_port_name_that_port_only() {
        assert!(bypassed("proxy.test:8080", &url("http://proxy.test:8080/")));
        assert!(!bypassed("proxy.test:8080", &url("http://proxy.test/")));
        assert!(bypassed("[::1]:8080", &url("http://[::1]:8080/")));
    }
}
