//! What a failure means to whoever ran the command. Library errors say it through [`Classify`]; the
//! command layer alone (`cli::exit`) turns a meaning into the contract's exit code, so no library
//! module knows the numbers and none depends on the command layer.

/// The meaning of an error for the person or script that ran the command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Meaning {
    /// The input or configuration is wrong (a flag, variable, file, target or workspace setting the
    /// user must change); retrying the same command cannot help.
    Usage,
    /// An account must sign in (again) before the work can go on.
    SignIn,
    /// Another process is doing this work on the same state database.
    Busy,
    /// The work stopped safely with something left to do; a later run continues it.
    WorkRemaining,
}

/// Implemented by library errors whose variants carry a meaning for the command's caller.
pub trait Classify {
    /// What this error means, or `None` when it is unexpected (a bug or an unclassified failure).
    fn meaning(&self) -> Option<Meaning>;
}
