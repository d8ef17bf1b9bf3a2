//! How server certificates are checked: by the platform's own verifier (`rustls-platform-verifier`),
//! so that what the system (and its browsers) trust, notebridge trusts, a company's TLS-inspecting
//! proxy's private CA included. On Linux and other Unix systems, where there is no one system
//! verifier, that is the system's certificate store (`SSL_CERT_FILE`/`SSL_CERT_DIR` when set) with
//! the Mozilla roots bundled in the binary beside it, so that a machine without a CA bundle still
//! reaches Microsoft and Notion. Which verifier a platform has is `platform::tls_verifier`.

use std::sync::{Arc, OnceLock};

/// The TLS set-up every client shares, made once per process (loading the system's roots reads
/// the disk).
pub fn config() -> Result<rustls::ClientConfig, String> {
    static CONFIG: OnceLock<Result<rustls::ClientConfig, String>> = OnceLock::new();
    CONFIG
        .get_or_init(|| make().map_err(|e| e.to_string()))
        .clone()
}

fn make() -> Result<rustls::ClientConfig, rustls::Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = crate::platform::tls_verifier(provider.clone())?;
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .dangerous()
        // Not a relaxation: the platform's verifier checks the chain, names and revocation as the
        // system does.
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    // A client given its TLS set-up whole offers only what it says: HTTP/2 first, as reqwest's own.
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

/// The trust store requests are checked against, for people (`doctor`).
pub fn store() -> String {
    let store = crate::platform::trust_store();
    match config() {
        Ok(_) => store,
        Err(e) => format!("{store}, which could not be loaded: {e}"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_client_gets_the_platform_verifier_and_offers_http2() {
        let config = super::config().expect("the verifier is set up");
        assert_eq!(
            config.alpn_protocols,
            [b"h2".to_vec(), b"http/1.1".to_vec()]
        );
        // One set-up per process, shared by every client.
        assert!(std::sync::Arc::ptr_eq(
            &config.crypto_provider().clone(),
            super::config().unwrap().crypto_provider()
        ));
        assert!(!super::store().contains("could not be loaded"));
    }
}
