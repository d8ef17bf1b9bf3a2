//! The peak RSS of one command alone, for the tests that bound a migration's memory.
//!
//! `wait4`'s `ru_maxrss` for a child started from this test process is not the child's alone: the
//! child begins as a copy of this process (`posix_spawn`), and Linux keeps the larger of the old and
//! the new image's high-water mark across `exec`. This process holds other tests' pages, servers and
//! notebooks, so that figure moved with whatever ran beside the test (145 to 260 MB for one
//! migration). So the command is started from a fresh, small copy of this binary, [`probe`], which
//! reports the command's own `ru_maxrss`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Where [`probe`] finds its job.
const JOB_ENV: &str = "NOTEBRIDGE_TEST_PEAK_RSS_JOB";

/// What [`probe`] runs and where it leaves what it saw.
#[derive(Serialize, Deserialize)]
struct Job {
    program: PathBuf,
    args: Vec<String>,
    envs: Vec<(String, String)>,
    stdout: PathBuf,
    stderr: PathBuf,
    result: PathBuf,
}

/// Runs `cmd` (built by `command`, which clears the environment) to its end and measures that one
/// process's peak RSS. Returns (exit code, stdout, stderr, peak bytes).
pub fn run_measured(cmd: &tokio::process::Command) -> (Option<i32>, String, String, u64) {
    let std_cmd = cmd.as_std();
    let dir = tempfile::tempdir().unwrap();
    let job = Job {
        program: PathBuf::from(std_cmd.get_program()),
        args: std_cmd
            .get_args()
            .map(|a| a.to_str().unwrap().to_owned())
            .collect(),
        envs: std_cmd
            .get_envs()
            .filter_map(|(k, v)| Some((k.to_str()?.to_owned(), v?.to_str()?.to_owned())))
            .collect(),
        stdout: dir.path().join("stdout"),
        stderr: dir.path().join("stderr"),
        result: dir.path().join("result"),
    };
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "peak_rss::probe",
            "--exact",
            "--ignored",
            "--test-threads=1",
            "--nocapture",
        ])
        .env_clear()
        .env(JOB_ENV, serde_json::to_string(&job).unwrap())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let result = std::fs::read_to_string(&job.result).unwrap_or_else(|e| {
        panic!(
            "the probe left no result ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let (code, peak) = result.trim().split_once(' ').unwrap();
    let read = |p: &PathBuf| String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned();
    (
        code.parse().ok(),
        read(&job.stdout),
        read(&job.stderr),
        peak.parse().unwrap(),
    )
}

/// Not a test: the fresh process [`run_measured`] starts its command from. Run without a job, it
/// has nothing to measure and says so.
#[test]
#[ignore = "not a test: run by peak_rss::run_measured in a process of its own"]
fn probe() {
    let Ok(job) = std::env::var(JOB_ENV) else {
        eprintln!("peak_rss::probe: no job in {JOB_ENV}; nothing to measure");
        return;
    };
    let job: Job = serde_json::from_str(&job).unwrap();
    let mut c = std::process::Command::new(&job.program);
    c.args(&job.args)
        .env_clear()
        .envs(job.envs.iter().map(|(k, v)| (k, v)))
        .stdin(std::process::Stdio::null())
        .stdout(std::fs::File::create(&job.stdout).unwrap())
        .stderr(std::fs::File::create(&job.stderr).unwrap());
    // Reaped by the `wait4` below, which is the point: it returns this child's own rusage.
    #[allow(clippy::zombie_processes)]
    let child = c.spawn().unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child, filling valid out-parameters; `child` is not waited again.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut u) };
    assert_eq!(r, pid, "wait4");
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status).to_string()
    } else {
        "signal".to_owned()
    };
    std::fs::write(&job.result, format!("{code} {}", u.ru_maxrss as u64 * 1024)).unwrap();
}
