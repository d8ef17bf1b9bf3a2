//! doctor's `network` check: which way each service's requests go (direct, or through which proxy
//! and read from where) and which trust store checks their certificates. It sends nothing: the
//! route is what `transport::proxy::route` gives every request to that address.

use url::Url;

use super::Check;
use crate::cli::exit::Exit;
use crate::settings::Settings;
use crate::transport::proxy::{Direct, Origin, Route};
use crate::transport::{self, tls, Proxies};

/// The check for the services this doctor run talks to (the Microsoft ones only when they are
/// checked).
pub(super) fn check(settings: &Settings, microsoft: bool) -> Check {
    let mut services = vec![("Notion", settings.notion_url.as_str())];
    if microsoft {
        services.push(("Microsoft Graph", settings.graph_url.as_str()));
        services.push(("sign-in", settings.authority_url.as_str()));
    }
    decide(&transport::proxies(), &services, &tls::store())
}

/// The verdict for `services` (name, base URL) under `proxies`, certificates checked against
/// `store`.
fn decide(proxies: &Proxies, services: &[(&str, &str)], store: &str) -> Check {
    let mut lines = Vec::new();
    let mut unusable = None;
    let mut tls = false;
    for (name, base) in services {
        let Ok(url) = Url::parse(base) else {
            // The service's own check names a malformed address.
            continue;
        };
        tls |= url.scheme() == "https";
        let route = proxies.route(&url);
        if let Route::Direct(Direct::Unusable { name, origin }) = &route {
            unusable.get_or_insert((*name, origin.name()));
        }
        lines.push(format!(
            "{name} ({}): {}",
            url.host_str().unwrap_or_default(),
            route.describe()
        ));
    }
    lines.push(if tls {
        format!("certificates checked against {store}")
    } else {
        "no TLS (plain http)".to_owned()
    });
    // A proxy auto-config script is not run: said, so that a direct connection that fails is
    // understood.
    if let Some(pac) = &proxies.system.auto_config {
        if !proxies.env.names_a_proxy() {
            lines.push(format!(
                "a proxy auto-config script is set ({} in {}) and not run",
                pac.name,
                Origin::System.name()
            ));
        }
    }
    let detail = lines.join("; ");
    match unusable {
        Some((name, from)) => Check::fail(
            "network",
            Some(Exit::Usage),
            detail,
            format!("set {name} ({from}) to the proxy's address as http://host:port"),
        ),
        None => Check::pass("network", detail),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::proxy::ProxySettings;

    fn env(vars: &[(&str, &str)]) -> ProxySettings {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ProxySettings::from_env(|k| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))
    }

    const SERVICES: &[(&str, &str)] = &[
        ("Notion", "https://api.notion.com"),
        ("Microsoft Graph", "https://graph.microsoft.com/v1.0"),
    ];

    #[test]
    fn names_the_proxy_where_it_was_read_and_the_trust_store() {
        let p = Proxies {
            env: env(&[
                ("HTTPS_PROXY", "http://bob:pw@proxy.corp:3128"),
                ("NO_PROXY", "notion.com"),
            ]),
            system: ProxySettings::default(),
        };
        let c = decide(&p, SERVICES, "the store");
        assert!(c.ok, "{c:?}");
        assert!(
            c.detail.contains(
                "Notion (api.notion.com): direct (NO_PROXY from the environment names the host)"
            ),
            "{}",
            c.detail
        );
        assert!(
            c.detail.contains("Microsoft Graph (graph.microsoft.com): through the proxy http://proxy.corp:3128 (HTTPS_PROXY from the environment)"),
            "{}",
            c.detail
        );
        assert!(c.detail.ends_with("certificates checked against the store"));
        assert!(!c.detail.contains("pw"), "{}", c.detail);
    }

    #[test]
    fn a_system_proxy_is_named_as_the_systems() {
        let p = Proxies {
            env: ProxySettings::default(),
            system: ProxySettings::from_windows(
                true,
                Some("corp:8080"),
                None,
                Some("http://wpad/"),
            ),
        };
        let c = decide(&p, SERVICES, "s");
        assert!(
            c.detail.contains(&format!(
                "through the proxy http://corp:8080 (ProxyServer from {})",
                Origin::System.name()
            )),
            "{}",
            c.detail
        );
        assert!(c.detail.contains("auto-config script"), "{}", c.detail);
    }

    #[test]
    fn an_unusable_proxy_fails_as_set_up() {
        let p = Proxies {
            env: env(&[("HTTPS_PROXY", "socks5://p:1080")]),
            system: ProxySettings::default(),
        };
        let c = decide(&p, SERVICES, "s");
        assert!(!c.ok);
        assert_eq!(c.exit, Some(Exit::Usage));
        assert!(c.fix.unwrap().contains("HTTPS_PROXY"));
    }

    #[test]
    fn plain_http_services_have_no_tls() {
        let c = decide(
            &Proxies::default(),
            &[("Notion", "http://127.0.0.1:9/")],
            "s",
        );
        assert!(c.ok);
        assert_eq!(
            c.detail,
            "Notion (127.0.0.1): direct (no proxy set); no TLS (plain http)"
        );
    }
}
