//! The per-user folders notebridge keeps its state and its config in. On Linux and macOS they are
//! `directories`' (which reads `HOME` and, on Linux, `XDG_DATA_HOME`/`XDG_CONFIG_HOME`). On Windows
//! they are `%LOCALAPPDATA%` and `%APPDATA%` as the process's environment names them, as Go's
//! `os.UserCacheDir`/`os.UserConfigDir` read them: the system sets both at log-on to the user's
//! known folders, so for a user they are the same folders, and a process started with others (a
//! portable set-up, a test) keeps its state there. Without them (a service's bare environment) the
//! known folders, asked of the shell.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use directories::BaseDirs;

/// The folder the state database goes in (as `<folder>/notebridge/notebridge.db`): the local one,
/// on Windows not the roaming one, since a WAL database and section downloads must not roam.
pub fn local_data_dir() -> Option<PathBuf> {
    folder("LOCALAPPDATA", BaseDirs::data_local_dir)
}

/// The folder the config file goes in (as `<folder>/notebridge/config.toml`); on Windows the
/// roaming one, since the config is small and follows the user.
pub fn config_dir() -> Option<PathBuf> {
    folder("APPDATA", BaseDirs::config_dir)
}

/// On Windows the folder `var` names, else (and elsewhere) `directories`' `known` one.
fn folder(var: &str, known: fn(&BaseDirs) -> &Path) -> Option<PathBuf> {
    let known = || BaseDirs::new().map(|b| known(&b).to_owned());
    if cfg!(windows) {
        from_env_or(std::env::var_os(var), known)
    } else {
        known()
    }
}

/// The folder an environment variable names when it names one (set and absolute: a relative one
/// would move with the working folder), else the known folder.
fn from_env_or(var: Option<OsString>, known: impl FnOnce() -> Option<PathBuf>) -> Option<PathBuf> {
    var.map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(known)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_the_environment_names_comes_before_the_known_one() {
        let named = std::env::temp_dir()
            .join("Ana")
            .join("AppData")
            .join("Local");
        let known = || Some(PathBuf::from("known"));
        assert_eq!(
            from_env_or(Some(named.clone().into_os_string()), known),
            Some(named)
        );
        assert_eq!(from_env_or(None, known), known());
        assert_eq!(from_env_or(Some("".into()), known), known(), "set empty");
        assert_eq!(
            from_env_or(Some("AppData".into()), known),
            known(),
            "relative"
        );
        assert_eq!(from_env_or(None, || None), None);
    }

    #[test]
    fn this_platform_reads_its_own_variables() {
        let local = local_data_dir().expect("a home folder");
        let config = config_dir().expect("a home folder");
        if cfg!(windows) {
            let var = |k| std::env::var_os(k).map(PathBuf::from);
            assert_eq!(Some(local), var("LOCALAPPDATA"));
            assert_eq!(Some(config), var("APPDATA"));
        } else {
            let b = BaseDirs::new().unwrap();
            assert_eq!(local, b.data_local_dir());
            assert_eq!(config, b.config_dir());
        }
    }
}
