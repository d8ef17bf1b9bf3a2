//! Owner-only access control lists in SDDL, and who besides the owner an ACL lets in: plain text,
//! so the rules are tested on every platform; `windows.rs` applies and reads them.

/// A file's protected DACL (nothing inherited) granting the user `sid` full access and no one else
/// any.
pub fn owner_only_file(sid: &str) -> String {
    format!("D:P(A;;FA;;;{sid})")
}

/// A folder's protected DACL: as [`owner_only_file`], inherited by the files and folders made in it
/// (the database's `-wal` and `-shm` files, a section's downloads).
pub fn owner_only_dir(sid: &str) -> String {
    format!("D:P(A;OICI;FA;;;{sid})")
}

/// Who besides the user `sid` the DACL in `sddl` lets in (the system and the administrators, who
/// can take any file anyway, do not count), named for a person; empty when only the user is.
pub fn readers_besides(sddl: &str, sid: &str) -> Vec<String> {
    let Some(dacl) = sddl.split("D:").nth(1) else {
        // No DACL part at all: the system grants everyone everything.
        return vec!["everyone (the file has no ACL)".into()];
    };
    if dacl.starts_with("NO_ACCESS_CONTROL") {
        return vec!["everyone (the file has no ACL)".into()];
    }
    let mut out = Vec::new();
    for ace in dacl.split('(').skip(1) {
        let ace = ace.split(')').next().unwrap_or_default();
        let f: Vec<&str> = ace.split(';').collect();
        if f.len() < 6 {
            continue;
        }
        let (kind, flags, who) = (f[0], f[1], f[5]);
        // Only allow entries grant; an inherit-only one applies to what is made inside, not here.
        if !matches!(kind, "A" | "OA" | "XA" | "ZA") || flags.contains("IO") {
            continue;
        }
        if who.eq_ignore_ascii_case(sid) || is_trusted(who) {
            continue;
        }
        let name = named(who);
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// SYSTEM, the Administrators and the owner's own rights (SIDs or their SDDL aliases).
fn is_trusted(who: &str) -> bool {
    matches!(
        who,
        "SY" | "BA" | "OW" | "S-1-5-18" | "S-1-5-32-544" | "S-1-3-4"
    )
}

fn named(who: &str) -> String {
    match who {
        "WD" | "S-1-1-0" => "Everyone".into(),
        "AU" | "S-1-5-11" => "Authenticated Users".into(),
        "BU" | "S-1-5-32-545" => "Users".into(),
        "BG" | "S-1-5-32-546" => "Guests".into(),
        "AN" | "S-1-5-7" => "Anonymous".into(),
        other => other.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ME: &str = "S-1-5-21-1004336348-1177238915-682003330-1001";

    #[test]
    fn what_is_set_for_a_file_and_a_folder_lets_in_only_the_owner() {
        assert_eq!(
            readers_besides(&owner_only_file(ME), ME),
            Vec::<String>::new()
        );
        assert_eq!(
            readers_besides(&owner_only_dir(ME), ME),
            Vec::<String>::new()
        );
        assert!(owner_only_dir(ME).contains("OICI"), "inherited inside");
        assert!(owner_only_file(ME).starts_with("D:P("), "protected");
    }

    #[test]
    fn a_profile_folders_inherited_acl_is_private() {
        // What a file under %LOCALAPPDATA% inherits: the user, SYSTEM, Administrators.
        let local = format!("D:AI(A;ID;FA;;;SY)(A;ID;FA;;;BA)(A;ID;FA;;;{ME})");
        assert!(readers_besides(&local, ME).is_empty());
    }

    #[test]
    fn others_are_named_and_inherit_only_or_deny_entries_do_not_count() {
        // A folder such as C:\Users\Public, or a share: everyone and the users read it.
        let public = format!(
            "D:AI(A;ID;FA;;;{ME})(A;OICIID;0x1200a9;;;BU)(A;ID;FR;;;WD)(D;;FA;;;AN)\
             (A;OICIIOID;GA;;;CO)(A;;FR;;;S-1-5-21-1-2-3-1002)"
        );
        assert_eq!(
            readers_besides(&public, ME),
            ["Users", "Everyone", "S-1-5-21-1-2-3-1002"]
        );
    }

    #[test]
    fn no_acl_at_all_is_open_to_everyone() {
        assert_eq!(readers_besides("D:NO_ACCESS_CONTROL", ME).len(), 1);
        assert_eq!(readers_besides("O:BA", ME).len(), 1);
    }
}
