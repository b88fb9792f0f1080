//! The shared, expensive half of the host: one `Engine`, the compiled component and its
//! `InstancePre`, and the epoch ticker that enforces wall-clock limits. Build it once and
//! open any number of sessions from it, from any thread.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use sha2::{Digest, Sha256};
use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{
    Config, Engine, InstanceAllocationStrategy, ModuleVersionStrategy, PoolingAllocationConfig,
};

use crate::bindings::{FileTools, FileToolsPre};
use crate::error::HostError;
use crate::imports::state::{HostState, EPOCH_TICK};

mod tool_sets;
pub(crate) use tool_sets::ToolSets;

/// The component, as built from `guest/` by this crate's build script.
pub const GUEST_WASM: &[u8] = include_bytes!(env!("FILE_TOOLS_GUEST_WASM"));

/// The sha256 of [`GUEST_WASM`], in hex, computed when the crate was built.
const GUEST_WASM_SHA256: &str = env!("FILE_TOOLS_GUEST_WASM_SHA256");

/// The sha256 of `wasm`: for the built-in component the one computed at build time.
fn wasm_sha256(wasm: &[u8]) -> [u8; 32] {
    if std::ptr::eq(wasm, GUEST_WASM) {
        let mut out = [0u8; 32];
        let hex = GUEST_WASM_SHA256.as_bytes();
        let nibble = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
        for (i, b) in out.iter_mut().enumerate() {
            *b = nibble(hex[2 * i]) << 4 | nibble(hex[2 * i + 1]);
        }
        return out;
    }
    Sha256::digest(wasm).into()
}

/// The standalone variant of the component (world `file-tools-standalone`): its only
/// imports are WASI, so plain WASI hosts such as the `wasmtime` CLI can run it. (With the
/// crate's feature `standalone`, on by default.)
#[cfg(feature = "standalone")]
pub const STANDALONE_WASM: &[u8] = include_bytes!(env!("FILE_TOOLS_GUEST_STANDALONE_WASM"));

/// The variant of the component for Wassette, the MCP runner for Wasm components: the
/// standalone component with a `package-docs` custom section appended (made in
/// `src/wassette.rs` from `wassette-package-docs.json`), so that each tool is described by
/// its WIT doc. Wit-parser based
/// tools (`jco transpile`, `wasm-tools component wit`) cannot decode a component with that
/// section: give them [`STANDALONE_WASM`] or [`GUEST_WASM`]. (With the crate's feature
/// `standalone`, on by default.)
#[cfg(feature = "standalone")]
pub fn wassette_component() -> Vec<u8> {
    [STANDALONE_WASM, &crate::wassette::docs_section()].concat()
}

/// Configures a [`Runtime`].
#[derive(Debug, Default)]
pub struct RuntimeBuilder {
    precompiled: Option<PathBuf>,
    cache_dir: Option<PathBuf>,
    component: Option<Vec<u8>>,
    pooling: Option<u32>,
    unmetered: bool,
}

impl RuntimeBuilder {
    /// Turns fuel metering off: calls are then bounded by the wall-clock limit (epoch
    /// interruption) and memory limit only, and [`crate::Limits::fuel_per_call`] is not
    /// enforced. Metering instruments every block of the compiled component and costs
    /// 10-30% on walks and searches (BENCHMARKS.md); embedders who need a deterministic compute bound
    /// keep it (the default).
    pub fn fuel_metering(mut self, on: bool) -> Self {
        self.unmetered = !on;
        self
    }

    /// Allocates instances from a pool of `max_instances` pre-reserved slots (Wasmtime's
    /// pooling allocator) instead of mapping fresh memory for each: instantiation then
    /// costs microseconds, which makes a fresh instance per call affordable (see
    /// [`crate::SessionBuilder::fresh_instance_per_call`]). At most `max_instances`
    /// sessions can hold an instance at once, and each instance's memory is capped at
    /// 1 GiB whatever the session's limit.
    pub fn pooling(mut self, max_instances: u32) -> Self {
        self.pooling = Some(max_instances.max(1));
        self
    }

    /// Loads the component from a precompiled artifact written by [`Runtime::precompile`].
    /// An artifact made for another component build or another engine configuration is
    /// ignored and the component is compiled instead, and so is one that another user
    /// could have written: the artifact must be a regular file (not a link), owned by this
    /// user or root and writable by no one else. The file is mapped, not copied: replace it
    /// only by renaming a new file over it. Its directory is resolved once, links and all,
    /// when the runtime is built. A session whose repository holds it (or the cache
    /// directory) is refused.
    pub fn precompiled(mut self, path: impl Into<PathBuf>) -> Self {
        self.precompiled = Some(path.into());
        self
    }

    /// Keeps compiled artifacts in `dir`, keyed by component and engine, so that later
    /// runtimes start in milliseconds. `dir` is made if missing and resolved once, when
    /// the runtime is built: links on the way are followed then, never again; when it
    /// cannot be made or resolved, nothing is cached.
    pub fn cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache_dir = Some(dir.into());
        self
    }

    /// Uses other component bytes than the built-in guest (for tests of the host itself).
    pub fn component_bytes(mut self, wasm: Vec<u8>) -> Self {
        self.component = Some(wasm);
        self
    }

    /// Creates the engine and loads or compiles the component.
    ///
    /// # Errors
    /// `HostError::Wasmtime` when the component cannot be compiled or linked.
    pub fn build(self) -> Result<Runtime, HostError> {
        let wasm: &[u8] = self.component.as_deref().unwrap_or(GUEST_WASM);
        let wasm_hash = wasm_sha256(wasm);
        let mut config = engine_config(&wasm_hash)?;
        config.consume_fuel(!self.unmetered);
        if let Some(n) = self.pooling {
            let mut pool = PoolingAllocationConfig::new();
            pool.total_component_instances(n)
                .total_core_instances(n.saturating_mul(8))
                .total_memories(n.saturating_mul(2))
                .total_tables(n.saturating_mul(8))
                .max_memory_size(1 << 30);
            config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        }
        let engine = Engine::new(&config)?;
        // Both places resolved once, here: what is loaded, kept and checked from now on.
        let cache_dir = self.cache_dir.as_deref().and_then(resolved_dir);
        let precompiled = self.precompiled.as_deref().and_then(resolved_file);
        let cache_file = cache_dir
            .as_ref()
            .map(|d| d.join(cache_name(&engine, &wasm_hash)));
        // The artifact given, else the cache's; compiled (and cached) when neither loads.
        let loaded = [precompiled.as_deref(), cache_file.as_deref()]
            .into_iter()
            .flatten()
            .find_map(|p| load_artifact(&engine, p));
        let component = match loaded {
            Some(c) => c,
            None => {
                let c = Component::new(&engine, wasm)?;
                if let Some(path) = &cache_file {
                    // A cache that cannot be written only costs start-up time.
                    let _ = write_artifact(&engine, path, wasm);
                }
                c
            }
        };
        let mut linker: Linker<HostState> = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
        FileTools::add_to_linker::<HostState, HasSelf<HostState>>(&mut linker, |s| s)?;
        let pre = FileToolsPre::new(linker.instantiate_pre(&component)?)?;
        let stop = Arc::new(AtomicBool::new(false));
        start_ticker(engine.clone(), stop.clone())
            .map_err(|e| HostError::Config(format!("cannot start the epoch thread: {e}")))?;
        Ok(Runtime {
            inner: Arc::new(Inner {
                engine,
                pre,
                stop,
                metered: !self.unmetered,
                tool_sets: Default::default(),
                wasm_hash,
                cache_dir: cache_dir.clone(),
                artifact_places: [precompiled, cache_dir].into_iter().flatten().collect(),
            }),
        })
    }
}

/// The engine and the compiled component, shared by sessions. Cheap to clone.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime").finish_non_exhaustive()
    }
}

struct Inner {
    engine: Engine,
    pre: FileToolsPre<HostState>,
    stop: Arc<AtomicBool>,
    /// Whether the engine meters fuel.
    metered: bool,
    /// What the component's `describe` said under each policy it accepted (see
    /// [`ToolSets`]), so that further sessions under the same policy skip asking.
    tool_sets: std::sync::Mutex<std::collections::HashMap<String, Arc<ToolSets>>>,
    /// The component's sha256, which names what is kept for it in `cache_dir`.
    wasm_hash: [u8; 32],
    /// Where compiled artifacts and tool sets are kept, if anywhere.
    cache_dir: Option<PathBuf>,
    /// Where compiled artifacts are loaded from (the precompiled path, the cache
    /// directory): native code the process runs, so no session's repository may hold them.
    artifact_places: Vec<PathBuf>,
}

/// Policies whose [`ToolSets`] a runtime keeps (most embedders use one or two).
const TOOL_SETS_KEPT: usize = 16;

impl Drop for Inner {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl Runtime {
    /// A builder with the defaults: the built-in component, fuel metering on, no pool.
    pub fn builder() -> RuntimeBuilder {
        RuntimeBuilder::default()
    }

    /// A runtime with the built-in component, compiled now.
    ///
    /// # Errors
    /// As [`RuntimeBuilder::build`].
    pub fn new() -> Result<Runtime, HostError> {
        RuntimeBuilder::default().build()
    }

    /// The Wasmtime engine the component is compiled for.
    pub fn engine(&self) -> &Engine {
        &self.inner.engine
    }

    /// Whether calls are metered with fuel (see [`RuntimeBuilder::fuel_metering`]).
    pub fn fuel_metered(&self) -> bool {
        self.inner.metered
    }

    pub(crate) fn pre(&self) -> &FileToolsPre<HostState> {
        &self.inner.pre
    }

    /// Where this runtime loads compiled artifacts from (see [`Inner::artifact_places`]).
    pub(crate) fn artifact_places(&self) -> &[PathBuf] {
        &self.inner.artifact_places
    }

    /// The tool sets the component described under `policy_json`, when a session of this
    /// runtime asked before, or a runtime of this component with the same cache directory
    /// kept them: the component accepted that very policy then.
    pub(crate) fn tool_sets(&self, policy_json: &str) -> Option<Arc<ToolSets>> {
        if let Some(sets) = self.inner.tool_sets.lock().ok()?.get(policy_json) {
            return Some(sets.clone());
        }
        let (path, key) = self.tool_sets_file(policy_json)?;
        let sets = Arc::new(tool_sets::load(&path, &key)?);
        self.keep_in_memory(policy_json, sets.clone());
        Some(sets)
    }

    /// Keeps `sets` for sessions under `policy_json`: in memory (up to [`TOOL_SETS_KEPT`]
    /// policies) and in the cache directory.
    pub(crate) fn keep_tool_sets(&self, policy_json: &str, sets: Arc<ToolSets>) {
        if let Some((path, key)) = self.tool_sets_file(policy_json) {
            tool_sets::store(&path, &key, &sets);
        }
        self.keep_in_memory(policy_json, sets);
    }

    /// Where the cache directory keeps the tool sets of `policy_json`, and their key.
    fn tool_sets_file(&self, policy_json: &str) -> Option<(PathBuf, String)> {
        let dir = self.inner.cache_dir.as_ref()?;
        let key = tool_sets::key(&self.inner.wasm_hash, policy_json);
        Some((dir.join(tool_sets::file_name(&key)), key))
    }

    fn keep_in_memory(&self, policy_json: &str, sets: Arc<ToolSets>) {
        if let Ok(mut kept) = self.inner.tool_sets.lock() {
            if kept.len() < TOOL_SETS_KEPT {
                kept.insert(policy_json.to_owned(), sets);
            }
        }
    }

    /// Writes a precompiled artifact of the built-in component for this engine
    /// configuration, for [`RuntimeBuilder::precompiled`].
    ///
    /// # Errors
    /// `HostError::Wasmtime` on compilation failure, `HostError::Config` when the file
    /// cannot be written.
    pub fn precompile(path: &Path) -> Result<(), HostError> {
        let engine = Engine::new(&engine_config(&wasm_sha256(GUEST_WASM))?)?;
        write_artifact(&engine, path, GUEST_WASM)
    }
}

/// The one engine configuration every runtime of the component whose sha256 is
/// `wasm_hash` uses (artifacts depend on it). The hash goes into the version string
/// Wasmtime writes into each artifact and checks when loading one (after its own major
/// version, which is what it checks by default): an artifact compiled from another
/// component, or by another major Wasmtime, is refused.
fn engine_config(wasm_hash: &[u8; 32]) -> wasmtime::Result<Config> {
    let mut c = Config::new();
    c.module_version(ModuleVersionStrategy::Custom(format!(
        "{}+file-tools-{}",
        ModuleVersionStrategy::WasmtimeVersion.as_str(),
        crate::hex(wasm_hash)
    )))?;
    c.consume_fuel(true);
    c.epoch_interruption(true);
    // For profiling the component with `perf record`: Wasmtime then writes
    // /tmp/perf-PID.map naming its compiled functions. Not part of the artifact key.
    if std::env::var_os("FILE_TOOLS_PERFMAP").is_some() {
        c.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    Ok(c)
}

fn cache_name(engine: &Engine, wasm_hash: &[u8; 32]) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut h);
    let short = crate::hex(&wasm_hash[..8]);
    format!("file-tools-{short}-{:016x}.cwasm", h.finish())
}

/// The component compiled into the artifact at `path` for `engine`, mapped from the file
/// rather than read and copied (most of a cold start went into that copy); `None` when
/// there is none, it was made for another component or engine configuration, or it is not
/// a file this user can trust (see [`open_trusted`]).
fn load_artifact(engine: &Engine, path: &Path) -> Option<Component> {
    let file = open_trusted(path)?;
    // SAFETY: an artifact is code the process runs. What is mapped is the file checked on
    // its descriptor by `open_trusted` (reached again through that descriptor, never by
    // path): a regular file that only this user or root can have written. Wasmtime checks
    // that it is an artifact of this engine's configuration, which names the component's
    // sha256 (`engine_config`). The mapping must not change while the component lives:
    // file-tools only ever writes artifacts under a temporary name and renames them over
    // (`write_artifact`), and no one else may write this one.
    #[allow(unsafe_code)]
    let mapped = unsafe { Component::deserialize_file(engine, descriptor_path(&file)) };
    match mapped {
        Ok(c) => Some(c),
        // No descriptor path here (no /proc mounted, say): read it through the descriptor.
        Err(_) => {
            let bytes = read_all(&file)?;
            // SAFETY: as above; the bytes are the checked file's, copied.
            #[allow(unsafe_code)]
            let copied = unsafe { Component::deserialize(engine, &bytes) };
            copied.ok()
        }
    }
}

fn read_all(mut file: &std::fs::File) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut file, &mut bytes).ok()?;
    Some(bytes)
}

/// A path that opens the very file `file` is open on, not the name it was found by.
#[cfg(target_os = "linux")]
fn descriptor_path(file: &std::fs::File) -> PathBuf {
    use std::os::fd::AsRawFd;
    PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()))
}

/// A path that opens the very file `file` is open on, not the name it was found by.
#[cfg(all(unix, not(target_os = "linux")))]
fn descriptor_path(file: &std::fs::File) -> PathBuf {
    use std::os::fd::AsRawFd;
    PathBuf::from(format!("/dev/fd/{}", file.as_raw_fd()))
}

/// Elsewhere no such path: the artifact is read through the descriptor.
#[cfg(not(unix))]
fn descriptor_path(_: &std::fs::File) -> PathBuf {
    PathBuf::new()
}

/// Opens the artifact at `path` if it may be run as code: not through a link at its own
/// name, without blocking (a FIFO there), and, checked on the descriptor, a regular file
/// owned by this user or root that no one else may write, so that no other user can
/// have written it or can change it while it is mapped. Where it lies does not matter:
/// what is mapped is this very file.
#[cfg(unix)]
fn open_trusted(path: &Path) -> Option<std::fs::File> {
    use rustix::fs::{Mode, OFlags};
    use std::os::unix::fs::MetadataExt;
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let file = std::fs::File::from(rustix::fs::open(path, flags, Mode::empty()).ok()?);
    let meta = file.metadata().ok()?;
    let me = rustix::process::geteuid().as_raw();
    let trusted = meta.file_type().is_file()
        && (meta.uid() == me || meta.uid() == 0)
        && meta.mode() & 0o022 == 0;
    trusted.then_some(file)
}

/// Elsewhere the file system's permissions are the embedder's to set.
#[cfg(not(unix))]
fn open_trusted(path: &Path) -> Option<std::fs::File> {
    std::fs::File::open(path).ok()
}

/// The cache directory `dir` as the file system resolves it now (made first, `0700`, if
/// missing), links and all; `None`, so that nothing is loaded or kept, when it cannot be
/// made or resolved (a path given as it is would be resolved again at every use). The
/// runtime uses this one path from then on: for its artifact, for the tool sets, and in
/// each session's check that the directory lies outside the repository, so a link on the
/// way that is swapped later (one inside a repository, to a directory the agent may write)
/// redirects nothing.
fn resolved_dir(dir: &Path) -> Option<PathBuf> {
    make_private_dir(dir).ok()?;
    std::fs::canonicalize(dir).ok()
}

/// The precompiled artifact `path` with its directory resolved as [`resolved_dir`] does
/// (but never made), for the same reason; its own name is kept, since `open_trusted`
/// refuses a link there. `None` when the directory does not resolve: there is then no
/// artifact to load.
fn resolved_file(path: &Path) -> Option<PathBuf> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Some(std::fs::canonicalize(dir).ok()?.join(path.file_name()?))
}

/// Makes `dir` and the directories missing above it, `0700`.
fn make_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Compiles `wasm` for `engine` into the artifact at `path`.
fn write_artifact(engine: &Engine, path: &Path, wasm: &[u8]) -> Result<(), HostError> {
    write_private(path, &engine.precompile_component(wasm)?)
}

/// Writes `bytes` to `path` as the cache's files are written (missing directories made
/// `0700`).
fn write_private(path: &Path, bytes: &[u8]) -> Result<(), HostError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        make_private_dir(dir).map_err(|e| HostError::Config(format!("{}: {e}", dir.display())))?;
    }
    // Written under a temporary name and renamed, so a reader never sees half a file and
    // a mapped file never changes; writable by its owner only, whatever the umask, or
    // `open_trusted` would refuse it. A temporary file left by a killed process of the
    // same number is removed first (never followed: removing a link removes the link).
    let tmp = temporary_name(path);
    let _ = std::fs::remove_file(&tmp);
    let mut open = std::fs::OpenOptions::new();
    open.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut open, 0o644);
    let written = open
        .open(&tmp)
        .and_then(|mut f| std::io::Write::write_all(&mut f, bytes))
        .and_then(|()| std::fs::rename(&tmp, path));
    written.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        HostError::Config(format!("{}: {e}", path.display()))
    })
}

/// The temporary name `path` is written under: the process's number and the thread's, so
/// that two threads writing one file at once (sessions of a new policy built in parallel)
/// never share it.
fn temporary_name(path: &Path) -> PathBuf {
    let thread = format!("{:?}", std::thread::current().id());
    let thread: String = thread.chars().filter(char::is_ascii_digit).collect();
    path.with_extension(format!("tmp{}-{thread}", std::process::id()))
}

fn start_ticker(engine: Engine, stop: Arc<AtomicBool>) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("file-tools-epoch".into())
        .spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(EPOCH_TICK);
                engine.increment_epoch();
            }
        })
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_components_hash_from_the_build_is_its_hash() {
        let now: [u8; 32] = Sha256::digest(GUEST_WASM).into();
        assert_eq!(wasm_sha256(GUEST_WASM), now);
        // Another component (a copy, elsewhere in memory) is hashed as it is.
        let copy = GUEST_WASM.to_vec();
        assert_eq!(wasm_sha256(&copy), now);
        assert_ne!(wasm_sha256(&copy[1..]), now);
    }

    /// An artifact is mapped into the engine of the component it was compiled from and
    /// serves a session; another component's engine, a file that is no artifact, one in
    /// the earlier layout (a header before Wasmtime's form), a missing file, one that
    /// another user may write, a link and a FIFO in its place are refused (the runtime then
    /// compiles). Where the file lies does not matter (a directory anyone may write: it is
    /// the checked file itself that is mapped).
    #[test]
    fn an_artifact_loads_only_into_the_engine_of_its_component() {
        use std::os::unix::fs::PermissionsExt;
        let set_mode = |p: &Path, mode: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod")
        };
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.cwasm");
        Runtime::precompile(&path).expect("precompile");
        let engine_for =
            |hash: &[u8; 32]| Engine::new(&engine_config(hash).expect("config")).expect("engine");
        let own = engine_for(&wasm_sha256(GUEST_WASM));
        assert!(
            load_artifact(&own, &path).is_some(),
            "its own engine refused it"
        );
        let mut other = wasm_sha256(GUEST_WASM);
        other[31] ^= 1;
        assert!(load_artifact(&engine_for(&other), &path).is_none());
        let junk = dir.path().join("junk.cwasm");
        std::fs::write(&junk, b"not an artifact").expect("write");
        assert!(load_artifact(&own, &junk).is_none());
        let mut earlier = b"FTCWASM1".to_vec();
        earlier.extend_from_slice(&wasm_sha256(GUEST_WASM));
        earlier.extend(std::fs::read(&path).expect("read"));
        std::fs::write(&junk, &earlier).expect("write");
        assert!(load_artifact(&own, &junk).is_none());
        assert!(load_artifact(&own, &dir.path().join("missing")).is_none());

        set_mode(&path, 0o664);
        assert!(
            load_artifact(&own, &path).is_none(),
            "a group-writable artifact was loaded"
        );
        set_mode(&path, 0o644);
        let link = dir.path().join("link.cwasm");
        std::os::unix::fs::symlink(&path, &link).expect("symlink");
        assert!(
            load_artifact(&own, &link).is_none(),
            "loaded through a link"
        );
        let fifo = dir.path().join("fifo.cwasm");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
            0,
        )
        .expect("mkfifo");
        assert!(
            load_artifact(&own, &fifo).is_none(),
            "a FIFO was taken for an artifact"
        );
        set_mode(dir.path(), 0o777);
        assert!(
            load_artifact(&own, &path).is_some(),
            "the control was refused"
        );
        set_mode(dir.path(), 0o755);

        let repo = tempfile::tempdir().expect("tempdir");
        std::fs::write(repo.path().join("a.txt"), "text\n").expect("write");
        let rt = Runtime::builder()
            .precompiled(&path)
            .build()
            .expect("runtime");
        let mut session = crate::Session::builder(&rt)
            .repo(repo.path())
            .build()
            .expect("session");
        assert_eq!(session.file_info("a.txt").expect("file_info").size, 5);
    }

    /// A temporary file a killed process of the same number left does not stop the
    /// artifact being written (and the temporary name is gone afterwards).
    #[test]
    fn a_left_temporary_file_does_not_stop_an_artifact_being_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.cwasm");
        let tmp = temporary_name(&path);
        std::fs::write(&tmp, b"half an artifact").expect("write");
        Runtime::precompile(&path).expect("precompile over a left temporary file");
        assert!(!tmp.exists(), "the temporary file was left");
        let own =
            Engine::new(&engine_config(&wasm_sha256(GUEST_WASM)).expect("config")).expect("engine");
        assert!(load_artifact(&own, &path).is_some());
    }

    /// The runtime's artifacts are native code the process runs: a session whose
    /// repository holds the runtime's cache directory or precompiled artifact (where the
    /// agent could write the next start's code) is refused; one beside them is not.
    #[test]
    fn a_repository_holding_the_runtimes_artifacts_is_refused() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let repo = tmp.path().join("repo");
        std::fs::create_dir(&repo).expect("mkdir");
        let art = tmp.path().join("a.cwasm");
        Runtime::precompile(&art).expect("precompile");
        for (inside, what) in [
            (
                Runtime::builder().cache_dir(repo.join(".cache/ft")),
                "cache",
            ),
            (
                Runtime::builder()
                    .precompiled(repo.join("a.cwasm"))
                    .cache_dir(tmp.path().join("c")),
                "artifact",
            ),
        ] {
            let rt = inside.build().expect("runtime");
            let err = crate::Session::builder(&rt)
                .repo(&repo)
                .writable(true)
                .build();
            let err = err.expect_err(what).to_string();
            assert!(err.contains("outside the repository"), "{what}: {err}");
        }
        let beside = Runtime::builder()
            .precompiled(&art)
            .build()
            .expect("runtime");
        crate::Session::builder(&beside)
            .repo(&repo)
            .build()
            .expect("control");
    }

    /// A precompiled artifact's directory is resolved when the runtime is built: reached
    /// through a link inside a repository that is swapped afterwards for a directory of
    /// the repository, the sessions are checked against where the artifact was loaded
    /// from (outside: not refused); a repository holding that place is (the control).
    #[test]
    fn a_precompiled_artifact_is_checked_where_it_was_loaded_from() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (out, repo) = (tmp.path().join("out"), tmp.path().join("repo"));
        std::fs::create_dir_all(&out).expect("mkdir");
        std::fs::create_dir_all(&repo).expect("mkdir");
        Runtime::precompile(&out.join("a.cwasm")).expect("precompile");
        let link = repo.join("link");
        std::os::unix::fs::symlink(&out, &link).expect("symlink");
        let rt = Runtime::builder()
            .precompiled(link.join("a.cwasm"))
            .build()
            .expect("runtime");
        assert_eq!(
            rt.artifact_places(),
            [std::fs::canonicalize(&out).expect("out").join("a.cwasm")]
        );
        std::fs::remove_file(&link).expect("unlink");
        std::fs::create_dir(&link).expect("mkdir");
        crate::Session::builder(&rt)
            .repo(&repo)
            .build()
            .expect("the artifact it runs lies outside");
        let err = crate::Session::builder(&rt)
            .repo(&out)
            .build()
            .expect_err("the artifact's own directory");
        assert!(err.to_string().contains("outside the repository"), "{err}");
    }
}
