//! How server certificates are trusted on each platform: the verifier `transport::tls` builds its
//! TLS set-up with, and the name of the store it checks against (for `doctor`).

use std::sync::Arc;

/// The platform's own certificate verifier (Windows, macOS, Android: the system's).
#[cfg(any(windows, target_vendor = "apple", target_os = "android"))]
pub fn tls_verifier(
    provider: Arc<rustls::crypto::CryptoProvider>,
) -> Result<rustls_platform_verifier::Verifier, rustls::Error> {
    rustls_platform_verifier::Verifier::new(provider)
}

/// Where there is no one system verifier (Linux, BSD): the system's store with the Mozilla roots
/// bundled beside it, so a machine without a CA bundle still reaches Microsoft and Notion.
#[cfg(not(any(windows, target_vendor = "apple", target_os = "android")))]
pub fn tls_verifier(
    provider: Arc<rustls::crypto::CryptoProvider>,
) -> Result<rustls_platform_verifier::Verifier, rustls::Error> {
    rustls_platform_verifier::Verifier::new_with_extra_roots(
        webpki_root_certs::TLS_SERVER_ROOT_CERTS.iter().cloned(),
        provider,
    )
}

/// The trust store a request is checked against, in words.
pub fn trust_store() -> String {
    #[cfg(windows)]
    let store =
        "the Windows certificate store (the system's verifier, as Edge and Chrome use)".to_owned();
    #[cfg(target_vendor = "apple")]
    let store = "the macOS keychains (the system's verifier, as Safari and Chrome use)".to_owned();
    #[cfg(not(any(windows, target_vendor = "apple")))]
    let store = {
        let from: Vec<String> = ["SSL_CERT_FILE", "SSL_CERT_DIR"]
            .iter()
            .filter_map(|v| std::env::var(v).ok().map(|p| format!("{v}={p}")))
            .collect();
        format!(
            "the system's certificate store ({}) and the Mozilla roots bundled with notebridge",
            if from.is_empty() {
                "the distribution's CA bundle".to_owned()
            } else {
                from.join(", ")
            }
        )
    };
    store
}
