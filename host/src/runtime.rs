//! The shared, expensive half of the host: one `Engine`, the compiled component and its
//! `InstancePre`, and the epoch ticker that enforces wall-clock limits. Build it once and
//! open any number of sessions from it, from any thread.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use sha2::{Digest, Sha256};
use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use crate::bindings::{FileTools, FileToolsPre};
use crate::error::HostError;
use crate::state::{HostState, EPOCH_TICK};

/// The component, as built from `guest/` by this crate's build script.
pub const GUEST_WASM: &[u8] = include_bytes!(env!("FILE_TOOLS_GUEST_WASM"));

/// The standalone variant of the component (world `file-tools-standalone`): its only
/// imports are WASI, so plain WASI hosts such as the `wasmtime` CLI can run it.
pub const STANDALONE_WASM: &[u8] = include_bytes!(env!("FILE_TOOLS_GUEST_STANDALONE_WASM"));

/// Header of a precompiled artifact: magic, then the sha256 of the component it was
/// compiled from, then Wasmtime's own serialized form.
const ARTIFACT_MAGIC: &[u8; 8] = b"FTCWASM1";

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
    /// ignored and the component is compiled instead.
    pub fn precompiled(mut self, path: impl Into<PathBuf>) -> Self {
        self.precompiled = Some(path.into());
        self
    }

    /// Keeps compiled artifacts in `dir`, keyed by component and engine, so that later
    /// runtimes start in milliseconds.
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
        let mut config = engine_config();
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
        let wasm: &[u8] = self.component.as_deref().unwrap_or(GUEST_WASM);
        let wasm_hash: [u8; 32] = Sha256::digest(wasm).into();
        let cache_file = self
            .cache_dir
            .as_ref()
            .map(|d| d.join(cache_name(&engine, &wasm_hash)));
        let component = match self
            .precompiled
            .as_deref()
            .or(cache_file.as_deref())
            .and_then(|p| load_artifact(&engine, p, &wasm_hash))
        {
            Some(c) => c,
            None => {
                let c = Component::new(&engine, wasm)?;
                if let Some(path) = &cache_file {
                    // A cache that cannot be written only costs start-up time.
                    let _ = write_artifact(&engine, path, wasm, &wasm_hash);
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
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl Runtime {
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

    /// Writes a precompiled artifact of the built-in component for this engine
    /// configuration, for [`RuntimeBuilder::precompiled`].
    ///
    /// # Errors
    /// `HostError::Wasmtime` on compilation failure, `HostError::Config` when the file
    /// cannot be written.
    pub fn precompile(path: &Path) -> Result<(), HostError> {
        let engine = Engine::new(&engine_config())?;
        let hash: [u8; 32] = Sha256::digest(GUEST_WASM).into();
        write_artifact(&engine, path, GUEST_WASM, &hash)
    }
}

/// The one engine configuration every runtime uses (artifacts depend on it).
fn engine_config() -> Config {
    let mut c = Config::new();
    c.consume_fuel(true);
    c.epoch_interruption(true);
    // For profiling the component with `perf record`: Wasmtime then writes
    // /tmp/perf-PID.map naming its compiled functions. Not part of the artifact key.
    if std::env::var_os("FILE_TOOLS_PERFMAP").is_some() {
        c.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    c
}

fn cache_name(engine: &Engine, wasm_hash: &[u8; 32]) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut h);
    let short: String = wasm_hash[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("file-tools-{short}-{:016x}.cwasm", h.finish())
}

fn load_artifact(engine: &Engine, path: &Path, wasm_hash: &[u8; 32]) -> Option<Component> {
    let bytes = std::fs::read(path).ok()?;
    let header = ARTIFACT_MAGIC.len() + 32;
    if bytes.len() < header || &bytes[..8] != ARTIFACT_MAGIC || &bytes[8..header] != wasm_hash {
        return None;
    }
    // SAFETY: the artifact was written by `write_artifact` for this very component (its
    // hash is in the header), into a cache directory or a path the embedder chose and
    // vouches for; Wasmtime itself refuses artifacts from another engine configuration.
    #[allow(unsafe_code)]
    let component = unsafe { Component::deserialize(engine, &bytes[header..]) };
    component.ok()
}

fn write_artifact(
    engine: &Engine,
    path: &Path,
    wasm: &[u8],
    wasm_hash: &[u8; 32],
) -> Result<(), HostError> {
    let compiled = engine.precompile_component(wasm)?;
    let mut out = Vec::with_capacity(compiled.len() + 40);
    out.extend_from_slice(ARTIFACT_MAGIC);
    out.extend_from_slice(wasm_hash);
    out.extend_from_slice(&compiled);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| HostError::Config(format!("{}: {e}", dir.display())))?;
    }
    // Written under a temporary name and renamed, so a reader never sees half a file.
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, &out).map_err(|e| HostError::Config(format!("{}: {e}", tmp.display())))?;
    std::fs::rename(&tmp, path).map_err(|e| HostError::Config(format!("{}: {e}", path.display())))
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
