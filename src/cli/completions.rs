//! `notebridge completions SHELL` and `notebridge man`: clap's own generators over the real command
//! tree, so the scripts and the page always list exactly the flags the binary accepts.

use clap::{Args, ValueEnum};

use super::output::Printer;
use crate::cli::exit::{CliResult, Exit, Failure};

/// The shells a completion script can be written for.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Shell {
    /// Bash (source it, or put it in the bash-completion folder).
    Bash,
    /// Zsh (a `_notebridge` file on `$fpath`).
    Zsh,
    /// Fish (`~/.config/fish/completions/notebridge.fish`).
    Fish,
    /// PowerShell (dot-source it from `$PROFILE`).
    Powershell,
}

/// Arguments of `completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to write the script for.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Prints the completion script for `args.shell` on stdout.
pub fn run_completions(args: CompletionsArgs) -> CliResult<Exit> {
    let shell = match args.shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
        Shell::Powershell => clap_complete::Shell::PowerShell,
    };
    let mut cmd = super::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "notebridge", &mut out);
    write_stdout(&out)
}

/// Prints the man page (roff) on stdout: the top page and one section per subcommand.
pub fn run_man(_printer: &Printer) -> CliResult<Exit> {
    let cmd = super::command();
    let mut out = Vec::new();
    render_man(&cmd, &mut out).map_err(Failure::unexpected)?;
    write_stdout(&out)
}

/// The top page and each subcommand's page, one after the other.
fn render_man(cmd: &clap::Command, out: &mut Vec<u8>) -> std::io::Result<()> {
    clap_mangen::Man::new(cmd.clone()).render(out)?;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("notebridge-{}", sub.get_name());
        let sub = sub.clone().bin_name(name.clone()).display_name(name);
        out.extend_from_slice(b"\n");
        let man = clap_mangen::Man::new(sub);
        man.render_title(out)?;
        man.render_name_section(out)?;
        man.render_synopsis_section(out)?;
        man.render_description_section(out)?;
        man.render_options_section(out)?;
    }
    Ok(())
}

/// Writes a generated document; a reader that closed the pipe early (`| head`) is not an error.
fn write_stdout(bytes: &[u8]) -> CliResult<Exit> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Failure::unexpected(e)),
        _ => Ok(Exit::Done),
    }
}
