//! Sign-in: the device-code flow and silent token refresh (being written).

use crate::exit::Exit;

/// The exit code an auth error in an error chain maps to, if any.
pub fn exit_class_of(_e: &(dyn std::error::Error + 'static)) -> Option<Exit> {
    None
}
