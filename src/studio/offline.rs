//! One recording as one self-contained HTML file (`reel show LOG --html OUT.html`): the
//! studio's page with its script and style inlined and the call's data embedded (overview,
//! every frame in full, the waveform, the audio as a WAV data URL), so it opens from disk,
//! with no server and no network, in a bug report or as a CI artifact.
//!
//! Written as the log is read: the frames go straight into the file, so memory holds one
//! frame at a time (and the WAV is rendered into a temporary file first). The audio is left
//! out of calls longer than [`MAX_AUDIO_MS`], whose WAV would weigh hundreds of megabytes;
//! the waveform is kept.

use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use reel_protocol::Base64Data;
use reel_recorder::WireLogReader;
use serde_json::json;

use super::assets::{INDEX, SCRIPT, STYLE};
use super::call::{self, FrameDetail, RAW_LIMIT};
use super::catalog;
use super::script_json::script_safe_json;

/// The longest call whose audio is embedded: ten minutes (about 77 MB of base64 WAV).
pub const MAX_AUDIO_MS: u64 = 10 * 60 * 1000;

/// How many slices the embedded waveform has.
const PEAK_BUCKETS: usize = 4_000;

/// What went into the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OfflineSummary {
    /// Entries embedded (frames and close markers).
    pub entries: u64,
    /// Whether the audio is (a call with audio, under [`MAX_AUDIO_MS`]).
    pub audio: bool,
}

/// Writes the recording at `log` (file name `name`) as a self-contained page into `out`.
pub fn write_page(log: &Path, name: &str, out: &Path) -> Result<OfflineSummary, String> {
    let info = catalog::summarize(log, name)?;
    let overview = call::overview(log, name)?;
    let span = overview.duration_ms.max(overview.audio_end_ms).max(1);
    let peaks = call::peaks(log, 0, span, PEAK_BUCKETS, None)?;
    let io = |error: std::io::Error| format!("{}: {error}", out.display());
    let mut file = BufWriter::new(std::fs::File::create(out).map_err(io)?);

    let (head, rest) = INDEX
        .split_once("<link rel=\"stylesheet\" href=\"studio.css\">")
        .ok_or("the page has no stylesheet link")?;
    let (body, tail) = rest
        .split_once("<script type=\"module\" src=\"studio.js\"></script>")
        .ok_or("the page has no script")?;
    write!(
        file,
        "{head}<style>\n{STYLE}</style>{body}<script>\nwindow.REEL_OFFLINE = "
    )
    .map_err(io)?;
    // The data, as one JSON object written piece by piece, every piece escaped for the
    // script-data state: no recorded string can end the element or swallow the page.
    let safe = script_safe_json;
    write!(
        file,
        "{{\"recording\": {}, \"overview\": {}, \"peaks\": {}, \"frames\": [",
        safe(&json!(info)),
        safe(&json!(overview)),
        safe(&json!({ "from": 0, "to": span, "peaks": peaks })),
    )
    .map_err(io)?;
    let mut t0 = None;
    let mut frames = 0u64;
    for entry in WireLogReader::open(log).map_err(|error| error.to_string())? {
        let entry = entry.map_err(|error| error.to_string())?;
        let t0 = *t0.get_or_insert(entry.ts_ms);
        let payload = &entry.payload;
        let cut = &payload[..payload.len().min(RAW_LIMIT)];
        let detail = FrameDetail {
            row: call::row(&entry, t0),
            json: serde_json::from_slice(payload).ok(),
            raw: String::from_utf8_lossy(cut).into_owned(),
            binary: entry.binary,
        };
        if frames > 0 {
            file.write_all(b",").map_err(io)?;
        }
        file.write_all(safe(&json!(detail)).as_bytes())
            .map_err(io)?;
        frames += 1;
    }
    file.write_all(b"], \"audio\": ").map_err(io)?;
    let audio = overview.audio_end_ms > 0 && span <= MAX_AUDIO_MS;
    if audio {
        file.write_all(b"\"data:audio/wav;base64,").map_err(io)?;
        write_wav_base64(log, &mut file)?;
        file.write_all(b"\"").map_err(io)?;
    } else {
        file.write_all(b"null").map_err(io)?;
    }
    write!(
        file,
        "}};\n</script>\n<script type=\"module\">\n{}\n</script>{tail}",
        SCRIPT.replace("</script", "<\\/script")
    )
    .map_err(io)?;
    file.flush().map_err(io)?;
    Ok(OfflineSummary {
        entries: frames,
        audio,
    })
}

/// The call's WAV, base64, into `out`: rendered into a temporary file, then encoded in
/// pieces (3-byte aligned, so the pieces join into one base64 text).
fn write_wav_base64(log: &Path, out: &mut impl Write) -> Result<(), String> {
    let mut wav = tempfile_in_target()?;
    {
        let mut exporter =
            reel_replayer::export::WavExporter::new(&mut wav).map_err(|e| e.to_string())?;
        for entry in reel_recorder::open_wire_log(log).map_err(|e| e.to_string())? {
            exporter
                .push(&entry.map_err(|e| e.to_string())?)
                .map_err(|e| e.to_string())?;
        }
        exporter.finish().map_err(|e| e.to_string())?;
    }
    wav.seek(SeekFrom::Start(0)).map_err(|e| e.to_string())?;
    let mut piece = vec![0u8; 3 * 64 * 1024];
    loop {
        let mut filled = 0;
        while filled < piece.len() {
            let n = wav.read(&mut piece[filled..]).map_err(|e| e.to_string())?;
            if n == 0 {
                break;
            }
            filled += n;
        }
        if filled == 0 {
            break;
        }
        let text = Base64Data(bytes::Bytes::copy_from_slice(&piece[..filled])).encode();
        out.write_all(text.as_bytes()).map_err(|e| e.to_string())?;
        if filled < piece.len() {
            break;
        }
    }
    Ok(())
}

/// A scratch file, removed when dropped.
struct Scratch {
    file: std::fs::File,
    path: std::path::PathBuf,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Read for Scratch {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.file.read(buf)
    }
}

impl Write for Scratch {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

impl Seek for Scratch {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        self.file.seek(to)
    }
}

fn tempfile_in_target() -> Result<Scratch, String> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("reel-show-html-{}-{n}.wav", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .map_err(|error| format!("{}: {error}", path.display()))?;
    Ok(Scratch { file, path })
}
