//! How every HTTP client of the product reaches the network: through the proxy the environment or
//! the system names (`proxy`; the system's settings are read by `platform::system_proxy_settings`), with certificates checked by the platform's verifier
//! (`tls`). Each `reqwest::Client` the product builds starts from [`client_builder`], the sign-in
//! service's included (oauth2 sends through it), so no request goes out another way.

pub mod proxy;
pub mod tls;

use std::sync::{Arc, OnceLock};

use url::Url;

use proxy::{ProxySettings, Route};

/// The proxy settings of this process: the environment's and the system's, read once.
#[derive(Clone, Debug, Default)]
pub struct Proxies {
    /// From the environment variables.
    pub env: ProxySettings,
    /// From the operating system.
    pub system: ProxySettings,
}

impl Proxies {
    /// Reads the process's environment and the system's settings.
    pub fn read() -> Self {
        Proxies {
            env: ProxySettings::from_env(|k| std::env::var(k).ok()),
            system: crate::platform::system_proxy_settings(),
        }
    }

    /// How a request to `dest` goes out.
    pub fn route(&self, dest: &Url) -> Route {
        proxy::route(&self.env, &self.system, dest)
    }
}

/// This process's proxy settings (read at the first client; a run does not follow later changes).
pub fn proxies() -> Arc<Proxies> {
    static PROXIES: OnceLock<Arc<Proxies>> = OnceLock::new();
    PROXIES.get_or_init(|| Arc::new(Proxies::read())).clone()
}

/// A client builder with the product's proxy choice and TLS verification; callers add their
/// timeouts and redirect policy.
pub fn client_builder() -> reqwest::ClientBuilder {
    let proxies = proxies();
    let builder = reqwest::Client::builder()
        // reqwest's own reading of the environment is replaced by `proxy::route`, which also
        // knows the system's settings and is what `doctor` shows.
        .no_proxy()
        .proxy(reqwest::Proxy::custom(move |dest| {
            proxies.route(dest).proxy().cloned()
        }));
    match tls::config() {
        Ok(config) => builder.use_preconfigured_tls(config),
        Err(e) => {
            // Without a verifier every TLS request fails, saying the certificate is unknown;
            // doctor names this cause.
            tracing::warn!(error = %e, "the platform's certificate verifier could not be set up");
            builder
        }
    }
}
