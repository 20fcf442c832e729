//! The memdiff HTML page of three collections as a real browser renders it: headless Chromium
//! (the distribution's package) loads the file; the DOM after rendering holds the collections'
//! table and the charts, and a screenshot is not blank. Skipped where Chromium is absent,
//! unless JITARENA_REQUIRE_CHROMIUM=1 (as CI sets it).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::tmp;
use jitarena_tools::cli::gen_log;
use jitarena_tools::gen::{GenOptions, Generator};

fn chromium() -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .map(|n| Path::new("/usr/bin").join(n))
        .find(|p| p.exists());
    if found.is_none() {
        assert!(
            std::env::var("JITARENA_REQUIRE_CHROMIUM").as_deref() != Ok("1"),
            "JITARENA_REQUIRE_CHROMIUM=1 but no chromium in /usr/bin (apt-get install chromium)"
        );
        eprintln!("chromium not found: skipping the browser test");
    }
    found
}

/// Headless Chromium with a fresh profile and no network chatter, as root may run it.
fn browser(exe: &Path, profile: &Path, args: &[&str]) -> std::process::Output {
    Command::new(exe)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .output()
        .expect("run chromium")
}

#[test]
fn the_three_collection_page_renders_with_its_tables_and_charts() {
    let Some(exe) = chromium() else { return };
    let (base, diff) = (tmp("base"), tmp("diff"));
    for (i, name) in ["benchmarks.run", "libraries.pmi", "realworld.run"]
        .iter()
        .enumerate()
    {
        for (root, scale) in [(&base, vec![]), (&diff, vec![("LSRA".to_string(), 40.0)])] {
            let dir = root.join(name);
            std::fs::create_dir_all(&dir).unwrap();
            let scale = if i == 1 { scale } else { vec![] };
            let g = Generator::new(GenOptions {
                seed: i as u64 + 1,
                methods: 60,
                scale,
            })
            .unwrap();
            gen_log(&g, &dir.join("a.jas")).unwrap();
        }
    }
    let page = tmp("page.html");
    let out = Command::new(env!("CARGO_BIN_EXE_jitarena"))
        .args(["memdiff", "-q", "--base-root"])
        .arg(&base)
        .arg("--diff-root")
        .arg(&diff)
        .arg("--html")
        .arg(&page)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let url = format!("file://{}", page.display());

    // The DOM after rendering.
    let dom = browser(&exe, &tmp("profile-dom"), &["--dump-dom", &url]);
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(dom.contains("<table id=\"collections\">"), "{dom:.2000}");
    for name in ["benchmarks.run", "libraries.pmi", "realworld.run"] {
        assert!(dom.contains(&format!("<td>{name}</td>")), "{name}");
    }
    // Bytes by collection and kinds across them; then per collection its kind bars (only where
    // a kind moved: libraries.pmi), scatter and distribution.
    assert_eq!(
        dom.matches("<svg").count(),
        2 + 1 + 3 * 2,
        "charts in the DOM"
    );
    assert_eq!(dom.matches("No kind changed.").count(), 2);
    assert!(dom.matches("<rect").count() > 20, "the charts have bars");

    // A screenshot that is not blank: many pixels away from the background, in several colors
    // (text, the red and green bars).
    let shot = tmp("page.png");
    let _ = std::fs::remove_file(&shot);
    let run = browser(
        &exe,
        &tmp("profile-shot"),
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1200,1600",
            &url,
        ],
    );
    assert!(
        shot.exists(),
        "no screenshot: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let pixels: Vec<&[u8]> = buf[..info.buffer_size()].chunks(channels).collect();
    let background = pixels[0];
    let inked = pixels.iter().filter(|p| p[..3] != background[..3]).count();
    assert!(
        inked * 100 > pixels.len(),
        "the screenshot is blank ({inked} of {} pixels differ from the background)",
        pixels.len()
    );
    let reddish = pixels
        .iter()
        .filter(|p| p[0] > 150 && p[1] < 90 && p[2] < 90)
        .count();
    assert!(reddish > 50, "no red growth bar in the screenshot");
}
