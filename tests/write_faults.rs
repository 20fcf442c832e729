//! Writers that survive faults: a failed or partial write never makes earlier records
//! unreadable, dictionary entries count only once written, a log that cannot be written keeps
//! saying so, kill -9 loses no complete record, and a forked child neither hangs nor writes to
//! its parent's log. The native cases run `tests/c/write_faults.c`.

mod native;

use std::cell::RefCell;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::rc::Rc;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use jitarena::log::{self, LogWriter, MethodRecord};
use jitarena::Shared;
use jitarena::{MethodCounts, Schema};
use native::build_program;

fn tmp(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("write_faults");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// An output that takes `budget` more bytes, then fails with ENOSPC (`None`: no limit). The
/// test keeps a clone to change the budget and to see the bytes.
#[derive(Default, Clone)]
struct Faulty(Rc<RefCell<Disk>>);

#[derive(Default)]
struct Disk {
    bytes: Vec<u8>,
    budget: Option<usize>,
}

impl Faulty {
    fn budget(&self, budget: Option<usize>) {
        self.0.borrow_mut().budget = budget;
    }

    fn bytes(&self) -> Vec<u8> {
        self.0.borrow().bytes.clone()
    }
}

impl Write for Faulty {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut disk = self.0.borrow_mut();
        let n = disk.budget.map_or(buf.len(), |b| b.min(buf.len()));
        if n == 0 && !buf.is_empty() {
            return Err(io::Error::from_raw_os_error(28));
        }
        disk.bytes.extend_from_slice(&buf[..n]);
        if let Some(b) = &mut disk.budget {
            *b -= n;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn schema(kinds: &[&str]) -> Shared<Schema> {
    let names = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
    Shared::new(Schema::new(names(kinds), names(&["A"])).unwrap())
}

fn counts(bytes: u64) -> MethodCounts {
    MethodCounts {
        kinds: vec![(0, bytes, 1)],
        phases: vec![(0, bytes)],
        used_bytes: bytes,
        ..MethodCounts::default()
    }
}

fn read_back(name: &str, bytes: &[u8]) -> (Vec<MethodRecord>, Vec<String>) {
    let path = tmp(name);
    std::fs::write(&path, bytes).unwrap();
    log::read_all(&path).unwrap_or_else(|e| panic!("the log does not read back: {e}"))
}

fn contexts(records: &[MethodRecord]) -> Vec<i64> {
    records.iter().map(|r| r.info.context).collect()
}

#[test]
fn a_write_that_fails_takes_back_the_schema_and_tier_it_introduced() {
    let (a, b) = (schema(&["X"]), schema(&["Y", "Z"]));
    let disk = Faulty::default();
    let mut w = LogWriter::new(disk.clone()).unwrap();
    w.write(&a, Some("m0"), 0, Some("T0"), &counts(8)).unwrap();
    disk.budget(Some(0));
    // A new schema and a new tier: nothing of the record reaches the output.
    let err = w.write(&b, Some("m1"), 1, Some("T1"), &counts(16));
    assert_eq!(err.unwrap_err().raw_os_error(), Some(28));
    disk.budget(None);
    w.remove_torn(|_, _| panic!("nothing to remove")).unwrap();
    w.write(&b, Some("m2"), 2, Some("T1"), &counts(24)).unwrap();
    w.write(&a, Some("m3"), 3, Some("T1"), &counts(32)).unwrap();
    let (records, warnings) = read_back("dict.jas", &disk.bytes());
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(contexts(&records), [0, 2, 3]);
    assert_eq!(records[1].info.tier.as_deref(), Some("T1"));
    assert_eq!(records[1].schema.kinds, ["Y", "Z"]);
    assert_eq!(records[2].schema.kinds, ["X"]);
}

#[test]
fn a_record_cut_short_refuses_later_records_until_it_is_removed() {
    let a = schema(&["X"]);
    let disk = Faulty::default();
    let mut w = LogWriter::new(disk.clone()).unwrap();
    w.write(&a, Some("m0"), 0, None, &counts(8)).unwrap();
    let whole = disk.bytes();
    disk.budget(Some(5)); // five bytes of the next record, then ENOSPC
    assert!(w.write(&a, Some("m1"), 1, Some("T1"), &counts(8)).is_err());
    assert_eq!(disk.bytes().len(), whole.len() + 5);
    disk.budget(None);
    // Refused while the torn bytes are there: nothing lands after them.
    let refused = w.write(&a, Some("m2"), 2, None, &counts(8)).unwrap_err();
    assert!(refused.to_string().contains("cut short"), "{refused}");
    assert_eq!(disk.bytes().len(), whole.len() + 5);
    // A removal that fails keeps the writer refusing.
    let failed = w.remove_torn(|_, _| Err(io::Error::other("cannot truncate")));
    assert!(failed.is_err());
    assert!(w.write(&a, Some("m3"), 3, None, &counts(8)).is_err());
    // Removing the torn bytes lets writing go on, after the last whole record.
    let clone = disk.clone();
    w.remove_torn(|_, len| {
        assert_eq!(len, whole.len() as u64);
        clone.0.borrow_mut().bytes.truncate(len as usize);
        Ok(())
    })
    .unwrap();
    w.write(&a, Some("m4"), 4, Some("T1"), &counts(8)).unwrap();
    let (records, warnings) = read_back("torn.jas", &disk.bytes());
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(contexts(&records), [0, 4]);
    assert_eq!(records[1].info.tier.as_deref(), Some("T1"));
}

#[test]
fn a_failed_write_does_not_move_what_the_next_name_and_context_are_relative_to() {
    // Version-2 records write the context and name relative to the previous record's: a
    // record that did not reach the file (wholly or in part) must not count as the previous.
    let a = schema(&["X"]);
    let disk = Faulty::default();
    let mut w = LogWriter::new(disk.clone()).unwrap();
    w.write(&a, Some("Ns.C:Alpha"), 10, None, &counts(8))
        .unwrap();
    disk.budget(Some(0));
    assert!(w
        .write(&a, Some("Ns.C:Alpsen"), 500, None, &counts(8))
        .is_err());
    disk.budget(None);
    w.write(&a, Some("Ns.C:Alps"), 11, None, &counts(8))
        .unwrap();
    let whole = disk.bytes().len();
    disk.budget(Some(4));
    assert!(w
        .write(&a, Some("Ns.C:Alpacas"), 900, None, &counts(8))
        .is_err());
    disk.budget(None);
    let clone = disk.clone();
    w.remove_torn(|_, len| {
        assert_eq!(len, whole as u64);
        clone.0.borrow_mut().bytes.truncate(len as usize);
        Ok(())
    })
    .unwrap();
    w.write(&a, Some("Ns.C:Alpaca"), 12, None, &counts(8))
        .unwrap();
    let (records, warnings) = read_back("relative.jas", &disk.bytes());
    assert!(warnings.is_empty(), "{warnings:?}");
    let seen: Vec<_> = records
        .iter()
        .map(|r| (r.info.name.clone().unwrap_or_default(), r.info.context))
        .collect();
    assert_eq!(
        seen,
        [
            ("Ns.C:Alpha".to_string(), 10),
            ("Ns.C:Alps".to_string(), 11),
            ("Ns.C:Alpaca".to_string(), 12)
        ]
    );
}

#[test]
fn a_trace_writer_survives_a_torn_method_too() {
    let a = schema(&["X"]);
    let disk = Faulty::default();
    let mut w = jitarena::trace::TraceWriter::new(disk.clone()).unwrap();
    let events = [jitarena::trace::alloc_event(0, 24)];
    w.write(&a, Some("m0"), 0, None, &events).unwrap();
    let whole = disk.bytes().len();
    disk.budget(Some(3));
    assert!(w.write(&a, Some("m1"), 1, Some("T"), &events).is_err());
    disk.budget(None);
    assert!(w.write(&a, Some("m2"), 2, Some("T"), &events).is_err());
    let clone = disk.clone();
    w.remove_torn(|_, len| {
        clone.0.borrow_mut().bytes.truncate(len as usize);
        Ok(())
    })
    .unwrap();
    assert_eq!(disk.bytes().len(), whole);
    w.write(&a, Some("m3"), 3, Some("T"), &events).unwrap();
    let path = tmp("torn.jat");
    std::fs::write(&path, disk.bytes()).unwrap();
    let mut reader = jitarena::trace::open(&path).unwrap();
    let mut seen = Vec::new();
    while let Some(m) = reader.next_method().unwrap() {
        seen.push((m.info.context, m.info.tier, m.events));
    }
    assert!(reader.warnings().is_empty());
    assert_eq!(
        seen,
        [
            (0, None, events.to_vec()),
            (3, Some("T".to_string()), events.to_vec())
        ]
    );
}

/// The fault program, built once for all tests of this file.
fn program() -> PathBuf {
    static PROGRAM: OnceLock<PathBuf> = OnceLock::new();
    PROGRAM
        .get_or_init(|| build_program("write_faults_c", &["tests/c/write_faults.c"], false))
        .clone()
}

/// Runs the fault program to its end within `limit`; returns its standard output.
fn run_within(cmd: Command, limit: Duration) -> String {
    run_pid_within(cmd, limit).1
}

/// As [`run_within`], also returning the process id.
fn run_pid_within(mut cmd: Command, limit: Duration) -> (u32, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run write_faults");
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("write_faults did not finish within {limit:?} (a deadlock?)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = output(&mut child);
    assert!(status.success(), "write_faults failed ({status}):\n{out}");
    (child.id(), out)
}

fn output(child: &mut Child) -> String {
    let mut text = String::new();
    if let Some(mut o) = child.stdout.take() {
        io::Read::read_to_string(&mut o, &mut text).unwrap();
    }
    if let Some(mut e) = child.stderr.take() {
        io::Read::read_to_string(&mut e, &mut text).unwrap();
    }
    text
}

/// The contexts the program printed as `ok <context>`.
fn accepted(out: &str) -> Vec<i64> {
    out.lines()
        .filter_map(|l| l.strip_prefix("ok "))
        .map(|n| n.parse().unwrap())
        .collect()
}

/// Checks that a record is what `method()` in `write_faults.c` wrote for its context.
fn check_record(r: &MethodRecord) {
    let (t, j) = (r.info.context / 1_000_000, r.info.context % 1_000_000);
    let name = r.info.name.as_deref().unwrap_or("");
    let head = format!("T{t}:M{j}:");
    assert!(
        name.starts_with(&head),
        "{name:?} for context {}",
        r.info.context
    );
    assert_eq!(name.len(), head.len() + ((j * 37) % 3000) as usize);
    let n = (j % 50 + 1) as u64;
    let bytes = n * 8 * (t as u64 + 1);
    assert_eq!(r.counts.kinds, [((t % 2) as u32, bytes, n)]);
    assert_eq!(r.counts.phases, [((j % 2) as u32, bytes)]);
}

fn read_log(path: &Path) -> (Vec<MethodRecord>, Vec<String>) {
    log::read_all(path).unwrap_or_else(|e| panic!("the log does not read back: {e}"))
}

#[test]
fn enospc_through_dup2_keeps_the_log_readable_and_names_written_again() {
    let path = tmp("enospc.jas");
    let mut cmd = Command::new(program());
    cmd.args(["enospc", path.to_str().unwrap()]);
    run_within(cmd, Duration::from_secs(60));
    let (records, warnings) = read_log(&path);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(contexts(&records), [0, 1, 2, 1_000_005, 6, 7]);
    records.iter().for_each(check_record);
    assert_eq!(records[3].info.tier.as_deref(), Some("Tier1"));
    assert_eq!(records[3].schema.kinds, ["BasicBlock", "ValueNumber"]);
    assert_eq!(records[4].info.tier.as_deref(), Some("Tier1"));
}

#[test]
fn a_log_on_dev_full_fails_every_record() {
    let mut cmd = Command::new(program());
    cmd.arg("devfull").env("JITARENA_LOG", "/dev/full");
    run_within(cmd, Duration::from_secs(60));
}

/// A log that is not a regular file has nothing to empty: a device or a FIFO takes every
/// record (the first write used to fail, cutting the device to length 0).
#[test]
fn a_log_on_dev_null_or_a_fifo_takes_every_record() {
    let mut cmd = Command::new(program());
    cmd.arg("accept").env("JITARENA_LOG", "/dev/null");
    run_within(cmd, Duration::from_secs(60));
    let fifo = tmp("log.fifo");
    let _ = std::fs::remove_file(&fifo);
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("run mkfifo");
    assert!(made.success());
    // The reader is there before the program opens the FIFO (the library does not wait for a
    // reader: with none, its open fails at once), and this test holds a write end too, so
    // that the reading ends only once the test lets go of it, after the program.
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    let reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .expect("open the FIFO to read");
    let held = std::fs::OpenOptions::new()
        .write(true)
        .open(&fifo)
        .expect("open the FIFO to write");
    // SAFETY: `reader` is an open descriptor; reads wait for data again.
    assert_eq!(
        unsafe { libc::fcntl(reader.as_raw_fd(), libc::F_SETFL, 0) },
        0
    );
    let drained = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        io::Read::read_to_end(&mut { reader }, &mut bytes).expect("read the FIFO");
        bytes
    });
    let mut cmd = Command::new(program());
    cmd.arg("accept").env("JITARENA_LOG", &fifo);
    run_within(cmd, Duration::from_secs(60));
    drop(held);
    let copy = tmp("log-from-fifo.jas");
    std::fs::write(&copy, drained.join().unwrap()).unwrap();
    let (records, warnings) = read_log(&copy);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(contexts(&records), [0, 1, 2, 3]);
    records.iter().for_each(check_record);
}

#[test]
fn a_short_write_under_rlimit_fsize_is_removed_and_later_records_follow_whole() {
    let path = tmp("fsize.jas");
    let mut cmd = Command::new(program());
    cmd.args(["fsize", path.to_str().unwrap()]);
    let out = run_within(cmd, Duration::from_secs(60));
    let (records, warnings) = read_log(&path);
    assert!(warnings.is_empty(), "{warnings:?}");
    let want = accepted(&out);
    assert!(want.len() >= 8, "{out}");
    assert_eq!(contexts(&records), want);
    records.iter().for_each(check_record);
    assert!(records
        .iter()
        .any(|r| r.info.tier.as_deref() == Some("Big")));
}

/// Runs the fork case with the parent's log at `log` (a pattern) and the children's in `dir`;
/// checks the parent's log (`parent_log`, given the parent's pid) and every child's.
fn fork_case(log: &Path, dir: &Path, parent_log: impl Fn(u32) -> PathBuf) {
    let mut cmd = Command::new(program());
    cmd.args(["fork", log.to_str().unwrap(), dir.to_str().unwrap()]);
    let (pid, out) = run_pid_within(cmd, Duration::from_secs(120));
    let written: usize = out
        .lines()
        .find_map(|l| l.strip_prefix("parent "))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{out}"));
    let parent = parent_log(pid);
    let (records, warnings) = read_log(&parent);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(records.len(), written);
    records.iter().for_each(check_record);
    assert!(records.iter().all(|r| r.info.context < 3_000_000));
    let children: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| *p != parent)
        .collect();
    assert_eq!(children.len(), 40, "each child writes its own log");
    for child in children {
        let (records, warnings) = read_log(&child);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].info.tier.as_deref(), Some("ChildTier"));
    }
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = tmp(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_forked_child_neither_hangs_nor_writes_to_the_parents_log() {
    let path = tmp("fork.jas");
    let dir = fresh_dir("fork-children");
    fork_case(&path, &dir, |_| path.clone());
}

#[test]
fn a_forked_child_of_a_per_process_log_writes_a_log_of_its_own() {
    let dir = fresh_dir("fork-per-process");
    let pattern = dir.join("log-%p.jas");
    fork_case(&pattern, &dir, |pid| dir.join(format!("log-{pid}.jas")));
}

#[test]
fn kill_9_during_writes_from_four_threads_loses_no_complete_record() {
    let path = tmp("kill9.jas");
    let mut child = Command::new(program())
        .args(["threads", path.to_str().unwrap(), "3000"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("run write_faults");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let ready = lines.next().map(|l| l.unwrap());
    std::thread::sleep(Duration::from_millis(30));
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    assert_eq!(ready.as_deref(), Some("ready"), "{status}");
    let (records, warnings) = read_log(&path);
    assert!(warnings.len() <= 1, "{warnings:?}");
    assert!(records.len() >= 3000, "{} records", records.len());
    records.iter().for_each(check_record);
}
