//! The operating system's proxy settings, read where each system keeps them: the registry on
//! Windows, the dynamic store on macOS. Elsewhere there are none (desktop environments' settings
//! reach programs as the environment variables). What they mean is decided in `transport::proxy`.

use crate::transport::proxy::ProxySettings;

/// The current user's proxy settings (WinINet's, which Edge and Chrome follow).
#[cfg(windows)]
pub fn read() -> ProxySettings {
    const KEY: &str = r"Software\Microsoft\Windows\CurrentVersion\Internet Settings";
    let Ok(key) = windows_registry::CURRENT_USER.open(KEY) else {
        return ProxySettings::default();
    };
    let enabled = key.get_u32("ProxyEnable").unwrap_or(0) != 0;
    let server = key.get_string("ProxyServer").ok();
    let overrides = key.get_string("ProxyOverride").ok();
    let auto_config = key.get_string("AutoConfigURL").ok();
    ProxySettings::from_windows(
        enabled,
        server.as_deref(),
        overrides.as_deref(),
        auto_config.as_deref(),
    )
}

/// The proxies of the network service in use (System Settings > Network > Details > Proxies).
#[cfg(target_os = "macos")]
pub fn read() -> ProxySettings {
    use system_configuration::core_foundation::array::CFArray;
    use system_configuration::core_foundation::base::{CFType, CFTypeRef, TCFType};
    use system_configuration::core_foundation::dictionary::CFDictionary;
    use system_configuration::core_foundation::number::CFNumber;
    use system_configuration::core_foundation::string::{CFString, CFStringRef};
    use system_configuration::dynamic_store::SCDynamicStoreBuilder;
    use system_configuration::sys::schema_definitions::{
        kSCPropNetProxiesExceptionsList, kSCPropNetProxiesHTTPEnable, kSCPropNetProxiesHTTPPort,
        kSCPropNetProxiesHTTPProxy, kSCPropNetProxiesHTTPSEnable, kSCPropNetProxiesHTTPSPort,
        kSCPropNetProxiesHTTPSProxy, kSCPropNetProxiesProxyAutoConfigEnable,
        kSCPropNetProxiesProxyAutoConfigURLString,
    };

    fn number(map: &CFDictionary<CFString, CFType>, key: CFStringRef) -> Option<i32> {
        map.find(key)?.downcast::<CFNumber>()?.to_i32()
    }
    fn string(map: &CFDictionary<CFString, CFType>, key: CFStringRef) -> Option<String> {
        Some(map.find(key)?.downcast::<CFString>()?.to_string())
    }
    fn proxy(
        map: &CFDictionary<CFString, CFType>,
        enable: CFStringRef,
        host: CFStringRef,
        port: CFStringRef,
    ) -> Option<(String, Option<i32>)> {
        (number(map, enable) == Some(1)).then_some(())?;
        Some((string(map, host)?, number(map, port)))
    }

    let Some(store) = SCDynamicStoreBuilder::new("notebridge").build() else {
        return ProxySettings::default();
    };
    let Some(map) = store.get_proxies() else {
        return ProxySettings::default();
    };
    // SAFETY: the keys are constants the SystemConfiguration framework exports.
    let (http, https, exceptions, pac_enable, pac_url) = unsafe {
        (
            proxy(
                &map,
                kSCPropNetProxiesHTTPEnable,
                kSCPropNetProxiesHTTPProxy,
                kSCPropNetProxiesHTTPPort,
            ),
            proxy(
                &map,
                kSCPropNetProxiesHTTPSEnable,
                kSCPropNetProxiesHTTPSProxy,
                kSCPropNetProxiesHTTPSPort,
            ),
            kSCPropNetProxiesExceptionsList,
            kSCPropNetProxiesProxyAutoConfigEnable,
            kSCPropNetProxiesProxyAutoConfigURLString,
        )
    };
    let exceptions: Vec<String> = map
        .find(exceptions)
        .and_then(|v| v.downcast::<CFArray>())
        .map(|list| {
            list.get_all_values()
                .into_iter()
                // SAFETY: the array's values are CF objects it holds; each is checked to be a
                // string before it is read.
                .filter_map(|p| {
                    unsafe { CFType::wrap_under_get_rule(p as CFTypeRef) }.downcast::<CFString>()
                })
                .map(|s| s.to_string())
                .collect()
        })
        .unwrap_or_default();
    let pac = (number(&map, pac_enable) == Some(1))
        .then(|| string(&map, pac_url))
        .flatten();
    ProxySettings::from_macos(
        http.as_ref().map(|(h, p)| (h.as_str(), *p)),
        https.as_ref().map(|(h, p)| (h.as_str(), *p)),
        &exceptions,
        pac.as_deref(),
    )
}

/// No system proxy settings here.
#[cfg(not(any(windows, target_os = "macos")))]
pub fn read() -> ProxySettings {
    ProxySettings::default()
}
