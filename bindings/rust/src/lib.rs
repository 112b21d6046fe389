//! Safe Rust binding over the shardplan C ABI (version 1).
//!
//! shardplan checks a sharding plan: it reads a `shardplan.v1` document (a
//! shape-only model description plus the layouts its modules claim), or one
//! made with a [`Builder`], and reports every problem as a [`Diagnostic`] (with
//! a help and a [`FixOperation`] JSON Patch where the engine knows what to
//! change, and grouped by cause in [`DiagnosticGroup`]s) or, when there is
//! none, who owns which parameter (the result JSON, schema
//! `shardplan.result.v1`).
//!
//! ```
//! use shardplan::{CheckOptions, Document, ParseOptions};
//!
//! # fn main() -> Result<(), shardplan::Error> {
//! let doc = Document::parse(r#"{"schema": "shardplan.v1", "mesh": {"tp": 2},
//!     "parameters": {}, "root": "m", "modules": {"m": {}}}"#, &ParseOptions::default())?;
//! let result = doc.check(&CheckOptions::default())?;
//! assert!(result.ok());
//! assert_eq!(result.diagnostic_count(), 0);
//! assert!(result.json()?.starts_with(r#"{"schema":"shardplan.result.v1""#));
//! # Ok(())
//! # }
//! ```
//!
//! Findings about a document, even malformed JSON, are diagnostics in the
//! result; an [`Error`] means the API was misused (a malformed placement, a
//! repeated name, an index out of range), memory ran out, or the loaded
//! library has an incompatible ABI version.
//!
//! Handles are freed when dropped. A [`Document`] or [`CheckResult`] may be
//! shared between threads (`Send + Sync`); a [`Builder`] or [`Layout`] may
//! be moved to another thread but not shared (`Send`).
//!
//! The crate links the static `libshardplan.a` (the shared library with the
//! `dynamic` feature or `SHARDPLAN_LINK=dynamic`), found in
//! `$SHARDPLAN_LIB_DIR`, else through `pkg-config` (an installed library),
//! else in the checkout's `<repo root>/bazel-bin/capi`; see `build.rs`.

#![warn(missing_docs)]

pub mod ffi;

use std::ffi::CStr;
use std::fmt;
use std::os::raw::c_int;
use std::ptr::{self, NonNull};
use std::sync::OnceLock;

/// The ABI version this binding was written for (`SP_ABI_VERSION`).
pub const EXPECTED_ABI_VERSION: u32 = ffi::SP_ABI_VERSION;

// ---- Errors -----------------------------------------------------------------

/// What kind of [`Error`] happened.
///
/// The first five are the C ABI's `sp_error_code` values; [`AbiMismatch`]
/// is raised by this binding when the loaded library has another ABI version.
///
/// [`AbiMismatch`]: ErrorCode::AbiMismatch
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// `SP_ERROR_NULL_ARGUMENT`: a required pointer argument was NULL.
    NullArgument,
    /// `SP_ERROR_INVALID_ARGUMENT`: a value is out of range or malformed.
    InvalidArgument,
    /// `SP_ERROR_OUT_OF_RANGE`: an index past the end.
    OutOfRange,
    /// `SP_ERROR_OUT_OF_MEMORY`.
    OutOfMemory,
    /// `SP_ERROR_INTERNAL`: a bug in shardplan.
    Internal,
    /// The loaded library's ABI version is not [`EXPECTED_ABI_VERSION`]
    /// (raised by this binding, not by the library).
    AbiMismatch,
    /// A code this binding does not know (a newer library).
    Unknown(i32),
}

impl ErrorCode {
    /// The code for a C `sp_error_code` value.
    pub fn from_raw(code: i32) -> ErrorCode {
        match code {
            ffi::SP_ERROR_NULL_ARGUMENT => ErrorCode::NullArgument,
            ffi::SP_ERROR_INVALID_ARGUMENT => ErrorCode::InvalidArgument,
            ffi::SP_ERROR_OUT_OF_RANGE => ErrorCode::OutOfRange,
            ffi::SP_ERROR_OUT_OF_MEMORY => ErrorCode::OutOfMemory,
            ffi::SP_ERROR_INTERNAL => ErrorCode::Internal,
            other => ErrorCode::Unknown(other),
        }
    }

    /// The C `sp_error_code` value; `None` for [`ErrorCode::AbiMismatch`],
    /// which has none.
    pub fn raw(self) -> Option<i32> {
        match self {
            ErrorCode::NullArgument => Some(ffi::SP_ERROR_NULL_ARGUMENT),
            ErrorCode::InvalidArgument => Some(ffi::SP_ERROR_INVALID_ARGUMENT),
            ErrorCode::OutOfRange => Some(ffi::SP_ERROR_OUT_OF_RANGE),
            ErrorCode::OutOfMemory => Some(ffi::SP_ERROR_OUT_OF_MEMORY),
            ErrorCode::Internal => Some(ffi::SP_ERROR_INTERNAL),
            ErrorCode::AbiMismatch => None,
            ErrorCode::Unknown(code) => Some(code),
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorCode::NullArgument => f.write_str("NULL_ARGUMENT"),
            ErrorCode::InvalidArgument => f.write_str("INVALID_ARGUMENT"),
            ErrorCode::OutOfRange => f.write_str("OUT_OF_RANGE"),
            ErrorCode::OutOfMemory => f.write_str("OUT_OF_MEMORY"),
            ErrorCode::Internal => f.write_str("INTERNAL"),
            ErrorCode::AbiMismatch => f.write_str("ABI_MISMATCH"),
            ErrorCode::Unknown(code) => write!(f, "UNKNOWN({code})"),
        }
    }
}

/// An error from the shardplan library (an `sp_error`, copied and freed) or
/// from this binding's ABI version check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// The kind of error.
    pub code: ErrorCode,
    /// The library's message.
    pub message: String,
}

impl Error {
    /// The kind of error.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The library's message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "shardplan: {}: {}", self.code, self.message)
    }
}

impl std::error::Error for Error {}

/// Turns a returned `sp_error *` into a `Result`, copying the code and the
/// message and freeing the error.
///
/// # Safety
/// `error` is NULL or an error just returned by the library and owned by the
/// caller; it must not be used afterwards.
unsafe fn take_error(error: *mut ffi::sp_error) -> Result<(), Error> {
    if error.is_null() {
        return Ok(());
    }
    let code = ErrorCode::from_raw(ffi::sp_error_code_of(error));
    let text = ffi::sp_error_message(error);
    let message = if text.is_null() {
        String::new()
    } else {
        CStr::from_ptr(text).to_string_lossy().into_owned()
    };
    ffi::sp_error_delete(error);
    Err(Error { code, message })
}

// ---- Versions ---------------------------------------------------------------

/// The ABI version of the loaded library (`sp_abi_version()`).
pub fn abi_version() -> u32 {
    // SAFETY: no arguments, no preconditions.
    unsafe { ffi::sp_abi_version() }
}

/// The loaded library's release, `"MAJOR.MINOR.PATCH"` (`sp_version_string()`).
pub fn version() -> &'static str {
    // SAFETY: the string has static storage and is never freed.
    unsafe {
        let text = ffi::sp_version_string();
        if text.is_null() {
            return "";
        }
        CStr::from_ptr(text).to_str().unwrap_or("")
    }
}

/// Checks a library ABI version against [`EXPECTED_ABI_VERSION`].
///
/// Every constructor ([`Document::parse`], [`Layout::new`], [`Builder::new`])
/// runs this once on `abi_version()` before its first call into the library
/// and refuses to work with an incompatible one.
///
/// ```
/// assert!(shardplan::check_abi(shardplan::EXPECTED_ABI_VERSION).is_ok());
/// let err = shardplan::check_abi(2).unwrap_err();
/// assert_eq!(err.code, shardplan::ErrorCode::AbiMismatch);
/// ```
pub fn check_abi(found: u32) -> Result<(), Error> {
    if found == EXPECTED_ABI_VERSION {
        Ok(())
    } else {
        Err(Error {
            code: ErrorCode::AbiMismatch,
            message: format!(
                "incompatible libshardplan: the loaded library has ABI version {found}, \
                 but this binding (shardplan crate {}) expects ABI version {EXPECTED_ABI_VERSION}",
                env!("CARGO_PKG_VERSION")
            ),
        })
    }
}

/// The ABI check, done once per process.
fn ensure_abi() -> Result<(), Error> {
    static CHECKED: OnceLock<Result<(), Error>> = OnceLock::new();
    CHECKED.get_or_init(|| check_abi(abi_version())).clone()
}

// ---- Strings ----------------------------------------------------------------

/// Borrows a Rust string as an input `sp_str` (valid while `text` is).
fn in_str(text: &str) -> ffi::sp_str {
    ffi::sp_str {
        data: text.as_ptr().cast(),
        size: text.len(),
    }
}

/// Copies an output `sp_str`; `None` when absent (data NULL).
///
/// # Safety
/// `text` must point to `size` readable bytes (or have data NULL).
unsafe fn copy_str(text: ffi::sp_str) -> Option<String> {
    if text.data.is_null() {
        return None;
    }
    if text.size == 0 {
        return Some(String::new());
    }
    let bytes = std::slice::from_raw_parts(text.data.cast::<u8>(), text.size);
    Some(String::from_utf8_lossy(bytes).into_owned())
}

// ---- Documents --------------------------------------------------------------

/// Limits that refuse hostile input while parsing (docs/format.md, section 5).
/// Zero means the library's default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ParseOptions {
    /// Module paths; 0: default 10,000,000.
    pub max_paths: u64,
    /// Total bytes of module FQNs; 0: default 2^30.
    pub max_fqn_bytes: u64,
    /// Nesting of arrays/objects; 0: default 64.
    pub max_json_depth: u32,
}

impl ParseOptions {
    fn raw(&self) -> ffi::sp_parse_options {
        ffi::sp_parse_options {
            max_paths: self.max_paths,
            max_fqn_bytes: self.max_fqn_bytes,
            max_json_depth: self.max_json_depth,
        }
    }
}

/// Options of [`Document::check`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckOptions {
    /// Worker threads for the parallel phases; 0: all cores. The result is
    /// the same for every value.
    pub threads: u32,
}

/// A parsed (or built) `shardplan.v1` document. Immutable; may be checked any
/// number of times, from several threads at once.
pub struct Document {
    raw: NonNull<ffi::sp_document>,
}

// SAFETY: the C ABI allows a document to be used from any thread, and every
// function taking it is `const` (read-only), safe to call concurrently.
unsafe impl Send for Document {}
unsafe impl Sync for Document {}

impl Document {
    /// Parses a `shardplan.v1` document from JSON text (`&str`, `String`,
    /// `&[u8]`, ...). A malformed document is not an error: it gives a
    /// document whose check reports the `invalid-document` diagnostic.
    ///
    /// ```
    /// use shardplan::{CheckOptions, Document, ParseOptions};
    /// let doc = Document::parse(b"{not json", &ParseOptions::default()).unwrap();
    /// assert!(!doc.is_valid().unwrap());
    /// let result = doc.check(&CheckOptions::default()).unwrap();
    /// assert_eq!(result.diagnostic(0).unwrap().code, "invalid-document");
    /// ```
    pub fn parse(json: impl AsRef<[u8]>, options: &ParseOptions) -> Result<Document, Error> {
        ensure_abi()?;
        let json = json.as_ref();
        let text = ffi::sp_str {
            data: json.as_ptr().cast(),
            size: json.len(),
        };
        let options = options.raw();
        let mut out = ptr::null_mut();
        // SAFETY: text and options are valid for the call; the text is copied.
        unsafe { take_error(ffi::sp_document_parse(text, &options, &mut out))? };
        Document::from_raw(out)
    }

    fn from_raw(raw: *mut ffi::sp_document) -> Result<Document, Error> {
        match NonNull::new(raw) {
            Some(raw) => Ok(Document { raw }),
            None => Err(Error {
                code: ErrorCode::Internal,
                message: "the library returned no document and no error".into(),
            }),
        }
    }

    /// Whether the document parsed; `false` for a malformed one (its check
    /// then holds the `invalid-document` diagnostic).
    pub fn is_valid(&self) -> Result<bool, Error> {
        let mut valid: c_int = 0;
        // SAFETY: self.raw is a live document.
        unsafe { take_error(ffi::sp_document_is_valid(self.raw.as_ptr(), &mut valid))? };
        Ok(valid != 0)
    }

    /// Checks the document: module-owned layouts, claims and, when the
    /// document has a plan, the final plan. The result does not borrow the
    /// document.
    pub fn check(&self, options: &CheckOptions) -> Result<CheckResult, Error> {
        self.run(options, ffi::sp_document_check)
    }

    /// Plans the document (`shardplan plan`, planner-v1): makes the final
    /// plan from the document's owners, templates and overrides, checks it
    /// like [`Document::check`], and computes the memory per device and the
    /// communication the plan implies ([`CheckResult::memory`],
    /// [`CheckResult::plan_entries`], [`CheckResult::communications`]; the
    /// result JSON also has `"plan"`, `"provenance"`, `"memory"`,
    /// `"communication"` and `"collectives"`), and with a `training` section
    /// the training memory per device ([`CheckResult::training`]). A
    /// document that gives a `plan` of its own is checked as
    /// [`Document::check`] does.
    ///
    /// ```
    /// use shardplan::{CheckOptions, Document, ParseOptions};
    /// let doc = Document::parse(r#"{"schema": "shardplan.v1", "mesh": {"tp": 2},
    ///     "parameters": {"w": {"shape": [4, 4]}}, "root": "m",
    ///     "modules": {"m": {"children": {"lin": "lin"}},
    ///                 "lin": {"type": "Linear", "forward": ["x"], "params": {"weight": "w"}}},
    ///     "templates": [{"axis": "tp", "rules": {"lin": "colwise"}}]}"#,
    ///     &ParseOptions::default())?;
    /// let result = doc.plan(&CheckOptions::default())?;
    /// assert!(result.ok());
    /// assert_eq!(result.plan_entry(0)?.provenance, "template:tp:lin");
    /// let memory = result.memory()?.expect("a planned result has memory");
    /// assert_eq!((memory.unsharded_bytes, memory.max_bytes), (64, 32));
    /// # Ok::<(), shardplan::Error>(())
    /// ```
    pub fn plan(&self, options: &CheckOptions) -> Result<CheckResult, Error> {
        self.run(options, ffi::sp_document_plan)
    }

    /// Runs `sp_document_check` or `sp_document_plan` and wraps the result.
    fn run(
        &self,
        options: &CheckOptions,
        call: unsafe extern "C" fn(
            *const ffi::sp_document,
            *const ffi::sp_check_options,
            *mut *mut ffi::sp_result,
        ) -> *mut ffi::sp_error,
    ) -> Result<CheckResult, Error> {
        let options = ffi::sp_check_options {
            threads: options.threads,
        };
        let mut out = ptr::null_mut();
        // SAFETY: self.raw is a live document, options valid for the call.
        unsafe { take_error(call(self.raw.as_ptr(), &options, &mut out))? };
        let Some(raw) = NonNull::new(out) else {
            return Err(Error {
                code: ErrorCode::Internal,
                message: "the library returned no result and no error".into(),
            });
        };
        // Owns the handle from here on, so an error below frees it.
        let mut result = CheckResult {
            raw,
            ok: false,
            count: 0,
            plan_count: 0,
            communication_count: 0,
            group_count: 0,
        };
        let mut ok: c_int = 0;
        // SAFETY: result.raw is a live result.
        unsafe {
            take_error(ffi::sp_result_ok(result.raw.as_ptr(), &mut ok))?;
            take_error(ffi::sp_result_diagnostic_count(
                result.raw.as_ptr(),
                &mut result.count,
            ))?;
            take_error(ffi::sp_result_plan_entry_count(
                result.raw.as_ptr(),
                &mut result.plan_count,
            ))?;
            take_error(ffi::sp_result_communication_count(
                result.raw.as_ptr(),
                &mut result.communication_count,
            ))?;
            take_error(ffi::sp_result_group_count(
                result.raw.as_ptr(),
                &mut result.group_count,
            ))?;
        }
        result.ok = ok != 0;
        Ok(result)
    }
}

impl Drop for Document {
    fn drop(&mut self) {
        // SAFETY: the handle is owned and deleted exactly once.
        unsafe { ffi::sp_document_delete(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for Document {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Document")
            .field("valid", &self.is_valid().ok())
            .finish()
    }
}

// ---- Results ----------------------------------------------------------------

/// How serious a [`Diagnostic`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Severity {
    /// An error: the document does not pass.
    Error,
    /// A warning.
    Warning,
    /// Information.
    Info,
    /// A severity this binding does not know (a newer library).
    Other(i32),
}

impl Severity {
    fn from_raw(raw: ffi::sp_severity) -> Severity {
        match raw {
            ffi::SP_SEVERITY_ERROR => Severity::Error,
            ffi::SP_SEVERITY_WARNING => Severity::Warning,
            ffi::SP_SEVERITY_INFO => Severity::Info,
            other => Severity::Other(other),
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Severity::Error => f.write_str("error"),
            Severity::Warning => f.write_str("warning"),
            Severity::Info => f.write_str("info"),
            Severity::Other(raw) => write!(f, "severity({raw})"),
        }
    }
}

/// One finding about a document, copied out of the result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Stable kebab-case code, e.g. `"multiple-owners"`.
    pub code: String,
    /// How serious it is.
    pub severity: Severity,
    /// For ownership errors, the reference framework's exact message.
    pub message: String,
    /// Module FQN (`Some("")` is the root), when there is one.
    pub fqn: Option<String>,
    /// Parameter name, when there is one.
    pub parameter: Option<String>,
    /// RFC 6901 JSON pointer of the declaration at fault, when there is one.
    pub pointer: Option<String>,
    /// What to change, where the engine knows (`"did you mean 'tp'? ..."`);
    /// `None` when it does not. Since 0.7.
    pub help: Option<String>,
    /// An RFC 6902 JSON Patch that fixes the finding: applied to the
    /// document in order, its operations make the finding go away without
    /// adding an error. Empty when there is none. Since 0.7.
    pub fix: Vec<FixOperation>,
}

impl fmt::Display for Diagnostic {
    /// `severity[code]: message`, then ` (at POINTER)` when there is a
    /// pointer; one line, without the help or the fix.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]: {}", self.severity, self.code, self.message)?;
        if let Some(pointer) = &self.pointer {
            write!(f, " (at {pointer})")?;
        }
        Ok(())
    }
}

/// One operation of a [`Diagnostic`]'s fix: an RFC 6902 JSON Patch
/// operation on the document, copied out of the result. Since 0.7.
///
/// Its `Display` is the operation as a compact JSON object, the bytes the
/// result JSON has for it: `{"op":"move","from":"/a","path":"/b"}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixOperation {
    /// `"move"` (the value at `from` to `path`) or `"replace"` (the value at
    /// `path` by `value`).
    pub op: String,
    /// RFC 6901 JSON pointer the operation writes.
    pub path: String,
    /// RFC 6901 JSON pointer the operation reads (`"move"`), when it has one.
    pub from: Option<String>,
    /// The new value as JSON text (`"tp"` with its quotes, or
    /// `["layers.*.mlp.experts.[0-9]"]`), when the operation has one.
    pub value: Option<String>,
}

/// Writes `text` as a JSON string, escaped as the result JSON escapes it.
fn write_json_string(f: &mut fmt::Formatter<'_>, text: &str) -> fmt::Result {
    f.write_str("\"")?;
    for ch in text.chars() {
        match ch {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\u{8}' => f.write_str("\\b")?,
            '\u{c}' => f.write_str("\\f")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            ch if u32::from(ch) < 0x20 => write!(f, "\\u{:04X}", u32::from(ch))?,
            ch => write!(f, "{ch}")?,
        }
    }
    f.write_str("\"")
}

impl fmt::Display for FixOperation {
    /// `{"op":...,"from":...,"path":...,"value":...}`, `from` and `value`
    /// only when present (`value` as its JSON text).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{\"op\":")?;
        write_json_string(f, &self.op)?;
        if let Some(from) = &self.from {
            f.write_str(",\"from\":")?;
            write_json_string(f, from)?;
        }
        f.write_str(",\"path\":")?;
        write_json_string(f, &self.path)?;
        if let Some(value) = &self.value {
            write!(f, ",\"value\":{value}")?;
        }
        f.write_str("}")
    }
}

/// Diagnostics with one cause, copied out of the result: the same code at
/// the same declaration (the same pointer, or none), as one over-wide
/// native pattern gives one diagnostic per module it should not have
/// matched. Every diagnostic is in exactly one group. Since 0.7.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiagnosticGroup {
    /// The diagnostics' code.
    pub code: String,
    /// Their severity.
    pub severity: Severity,
    /// Their JSON pointer; `None` when they have none.
    pub pointer: Option<String>,
    /// The number of diagnostics in the group.
    pub count: usize,
    /// Their indexes for [`CheckResult::diagnostic`], in order.
    pub listed: Vec<usize>,
}

impl fmt::Display for DiagnosticGroup {
    /// `severity[code] xCOUNT`, then ` (at POINTER)` when there is a pointer.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}] x{}", self.severity, self.code, self.count)?;
        if let Some(pointer) = &self.pointer {
            write!(f, " (at {pointer})")?;
        }
        Ok(())
    }
}

/// Memory per device of a planned result (planner-v1, section 5), copied
/// out. Devices are numbered row-major over the mesh axes; bytes are per
/// device.
#[derive(Debug, Clone, PartialEq)]
pub struct Memory {
    /// The number of devices of the mesh.
    pub devices: u64,
    /// Every parameter identity once, unsharded.
    pub unsharded_bytes: u64,
    /// The most bytes any device holds.
    pub max_bytes: u64,
    /// The fewest bytes any device holds.
    pub min_bytes: u64,
    /// The mean over the devices.
    pub mean_bytes: f64,
    /// The lowest device holding `max_bytes`.
    pub max_device: u64,
    /// The bytes of each device, in device order; `None` beyond 65,536
    /// devices.
    pub per_device_bytes: Option<Vec<u64>>,
}

/// Training memory of a result (training-v1, section 4), copied out: for a
/// document with a `training` section, the worst device (the largest total,
/// the lowest number on ties) by category, and the totals over devices. All
/// in bytes per device; a category that does not apply is 0. Whether it fits
/// (`exceeds-device-memory`, `near-device-memory`) is among the result's
/// diagnostics. Since 0.9.
#[derive(Debug, Clone, PartialEq)]
pub struct Training {
    /// The worst device (numbered row-major over the mesh axes).
    pub worst_device: u64,
    /// Its coordinate on each mesh axis, in mesh order.
    pub worst_coordinates: Vec<u64>,
    /// Its parameter bytes.
    pub params: u64,
    /// Its gradient bytes.
    pub grads: u64,
    /// Its master-copy bytes.
    pub master: u64,
    /// Its optimizer-state bytes.
    pub optimizer: u64,
    /// The largest FSDP unit, gathered (zero 3).
    pub gathered: u64,
    /// Activation bytes, the same on every device.
    pub activations: u64,
    /// Its total.
    pub total: u64,
    /// The largest total of any device.
    pub max_total_bytes: u64,
    /// The smallest total of any device.
    pub min_total_bytes: u64,
    /// The mean total over the devices.
    pub mean_total_bytes: f64,
    /// The total of each device, in device order; `None` beyond 65,536
    /// devices.
    pub per_device_total_bytes: Option<Vec<u64>>,
}

/// One entry of a planned result's final plan, copied out. The layout
/// itself is in [`CheckResult::json`] (`"plan"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanEntry {
    /// The module's FQN (`""` is the root).
    pub fqn: String,
    /// Where the entry came from, joined with `", "`: `"owned:model"`,
    /// `"owned:family"`, `"owned:native"`, `"template:AXIS:PATTERN"` (one per
    /// rule) or `"override"`.
    pub provenance: String,
}

impl fmt::Display for PlanEntry {
    /// `fqn (provenance)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.fqn, self.provenance)
    }
}

/// One communication record of a planned result (planner-v1, section 6),
/// copied out: on port `port` of the module at `fqn`, mesh axis `axis` goes
/// from placement `from` to `to`, which takes `collective`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Communication {
    /// The module's FQN.
    pub fqn: String,
    /// `"in:NAME"` (in_src -> in_dst) or `"out:NAME"` (out_src -> out_dst).
    pub port: String,
    /// The mesh axis.
    pub axis: String,
    /// The source placement, e.g. `"P"`.
    pub from: String,
    /// The destination placement, e.g. `"R"`.
    pub to: String,
    /// `"all_gather"`, `"slice"`, `"all_reduce"`, `"reduce_scatter"`,
    /// `"all_to_all"`, `"none"` or `"unsupported"`.
    pub collective: String,
}

impl fmt::Display for Communication {
    /// `fqn port axis: from -> to (collective)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {}: {} -> {} ({})",
            self.fqn, self.port, self.axis, self.from, self.to, self.collective
        )
    }
}

/// An output `sp_str` to be filled in (absent until then).
fn out_str() -> ffi::sp_str {
    ffi::sp_str {
        data: ptr::null(),
        size: 0,
    }
}

/// The result of [`Document::check`] or [`Document::plan`]: the verdict, the
/// diagnostics in evaluation order (the first one is the reference
/// framework's error) and the whole result as JSON; for a planned result
/// also the memory per device, the plan entries and the communication
/// records.
pub struct CheckResult {
    raw: NonNull<ffi::sp_result>,
    ok: bool,
    count: usize,
    plan_count: usize,
    communication_count: usize,
    group_count: usize,
}

// SAFETY: a result is immutable; every function taking it is `const`, which
// the C ABI allows from several threads at once.
unsafe impl Send for CheckResult {}
unsafe impl Sync for CheckResult {}

impl CheckResult {
    /// `true` when the document has no error diagnostic.
    pub fn ok(&self) -> bool {
        self.ok
    }

    /// The number of diagnostics.
    pub fn diagnostic_count(&self) -> usize {
        self.count
    }

    /// Diagnostic `index` (0-based), with its help and fix; an index past
    /// the end is an [`ErrorCode::OutOfRange`] error from the library.
    ///
    /// ```
    /// use shardplan::{CheckOptions, Document, ParseOptions};
    /// let doc = Document::parse(r#"{"schema": "shardplan.v1", "mesh": {"tp": 2},
    ///     "parameters": {"w": {"shape": [4, 4]}}, "root": "m",
    ///     "modules": {"m": {"children": {"lin": "lin"}},
    ///                 "lin": {"type": "Linear", "forward": ["x"], "params": {"weight": "w"}}},
    ///     "providers": {"sharding": {"lni": {"params": {"weight": {"tp": "S(0)"}},
    ///                                        "in_src": {"x": {}}, "in_dst": {"x": {}}}}}}"#,
    ///     &ParseOptions::default())?;
    /// let d = doc.check(&CheckOptions::default())?.diagnostic(0)?;
    /// assert_eq!(d.code, "unknown-module");
    /// assert_eq!(d.help.as_deref(), Some("did you mean 'lin'?"));
    /// assert_eq!(d.fix[0].to_string(),
    ///            r#"{"op":"move","from":"/providers/sharding/lni","path":"/providers/sharding/lin"}"#);
    /// # Ok::<(), shardplan::Error>(())
    /// ```
    pub fn diagnostic(&self, index: usize) -> Result<Diagnostic, Error> {
        let mut raw = ffi::sp_diagnostic {
            code: ffi::sp_str {
                data: ptr::null(),
                size: 0,
            },
            severity: ffi::SP_SEVERITY_ERROR,
            message: ffi::sp_str {
                data: ptr::null(),
                size: 0,
            },
            fqn: ffi::sp_str {
                data: ptr::null(),
                size: 0,
            },
            parameter: ffi::sp_str {
                data: ptr::null(),
                size: 0,
            },
            pointer: ffi::sp_str {
                data: ptr::null(),
                size: 0,
            },
        };
        // SAFETY: self.raw is a live result; the strings it hands out live as
        // long as it and are copied before returning.
        unsafe {
            take_error(ffi::sp_result_diagnostic(
                self.raw.as_ptr(),
                index,
                &mut raw,
            ))?;
            let mut help = out_str();
            take_error(ffi::sp_result_diagnostic_help(
                self.raw.as_ptr(),
                index,
                &mut help,
            ))?;
            let mut fix_count = 0usize;
            take_error(ffi::sp_result_diagnostic_fix_count(
                self.raw.as_ptr(),
                index,
                &mut fix_count,
            ))?;
            let mut fix = Vec::with_capacity(fix_count);
            for operation in 0..fix_count {
                let mut op = ffi::sp_fix_operation {
                    op: out_str(),
                    path: out_str(),
                    from: out_str(),
                    value: out_str(),
                };
                take_error(ffi::sp_result_diagnostic_fix(
                    self.raw.as_ptr(),
                    index,
                    operation,
                    &mut op,
                ))?;
                fix.push(FixOperation {
                    op: copy_str(op.op).unwrap_or_default(),
                    path: copy_str(op.path).unwrap_or_default(),
                    from: copy_str(op.from),
                    value: copy_str(op.value),
                });
            }
            Ok(Diagnostic {
                code: copy_str(raw.code).unwrap_or_default(),
                severity: Severity::from_raw(raw.severity),
                message: copy_str(raw.message).unwrap_or_default(),
                fqn: copy_str(raw.fqn),
                parameter: copy_str(raw.parameter),
                pointer: copy_str(raw.pointer),
                help: copy_str(help),
                fix,
            })
        }
    }

    /// All diagnostics, in evaluation order.
    pub fn diagnostics(&self) -> Result<Vec<Diagnostic>, Error> {
        (0..self.count)
            .map(|index| self.diagnostic(index))
            .collect()
    }

    /// The number of diagnostic groups (0 when there is no diagnostic).
    /// Since 0.7.
    pub fn group_count(&self) -> usize {
        self.group_count
    }

    /// Diagnostic group `index` (0-based; groups come in the order of their
    /// first diagnostic); an index past the end is an
    /// [`ErrorCode::OutOfRange`] error from the library. Since 0.7.
    pub fn group(&self, index: usize) -> Result<DiagnosticGroup, Error> {
        let mut raw = ffi::sp_diagnostic_group {
            code: out_str(),
            severity: ffi::SP_SEVERITY_ERROR,
            pointer: out_str(),
            count: 0,
            listed: ptr::null(),
            num_listed: 0,
        };
        // SAFETY: self.raw is a live result; the strings and `listed`
        // (num_listed indexes, or NULL), owned by it, are copied before
        // returning.
        unsafe {
            take_error(ffi::sp_result_group(self.raw.as_ptr(), index, &mut raw))?;
            let listed = if raw.listed.is_null() || raw.num_listed == 0 {
                Vec::new()
            } else {
                std::slice::from_raw_parts(raw.listed, raw.num_listed).to_vec()
            };
            Ok(DiagnosticGroup {
                code: copy_str(raw.code).unwrap_or_default(),
                severity: Severity::from_raw(raw.severity),
                pointer: copy_str(raw.pointer),
                count: raw.count,
                listed,
            })
        }
    }

    /// All diagnostic groups, in the order of their first diagnostic (the
    /// result JSON's `"groups"`). Since 0.7.
    ///
    /// ```
    /// use shardplan::{CheckOptions, Document, ParseOptions};
    /// let doc = Document::parse(b"{not json", &ParseOptions::default())?;
    /// let groups = doc.check(&CheckOptions::default())?.groups()?;
    /// assert_eq!(groups.len(), 1);
    /// assert_eq!((groups[0].code.as_str(), groups[0].count), ("invalid-document", 1));
    /// assert_eq!(groups[0].listed, vec![0]);
    /// # Ok::<(), shardplan::Error>(())
    /// ```
    pub fn groups(&self) -> Result<Vec<DiagnosticGroup>, Error> {
        (0..self.group_count)
            .map(|index| self.group(index))
            .collect()
    }

    /// The whole result as compact JSON (schema `shardplan.result.v1`, the
    /// bytes `shardplan check --format json` prints).
    pub fn json(&self) -> Result<String, Error> {
        let mut out = ffi::sp_str {
            data: ptr::null(),
            size: 0,
        };
        // SAFETY: self.raw is a live result; the text is copied.
        unsafe {
            take_error(ffi::sp_result_json(self.raw.as_ptr(), &mut out))?;
            Ok(copy_str(out).unwrap_or_default())
        }
    }

    /// The memory per device of a planned result; `None` when the result
    /// was not planned (made by [`Document::check`], or the document gave a
    /// plan of its own) or the mesh has more than 2^24 devices.
    pub fn memory(&self) -> Result<Option<Memory>, Error> {
        let mut raw = ffi::sp_memory {
            devices: 0,
            unsharded_bytes: 0,
            max_bytes: 0,
            min_bytes: 0,
            mean_bytes: 0.0,
            max_device: 0,
            per_device_bytes: ptr::null(),
            num_devices_listed: 0,
        };
        let mut present: c_int = 0;
        // SAFETY: self.raw is a live result; per_device_bytes, owned by it,
        // points to num_devices_listed values (or is NULL) and is copied
        // before returning.
        unsafe {
            take_error(ffi::sp_result_memory(
                self.raw.as_ptr(),
                &mut raw,
                &mut present,
            ))?;
            if present == 0 {
                return Ok(None);
            }
            let per_device_bytes = if raw.per_device_bytes.is_null() {
                None
            } else if raw.num_devices_listed == 0 {
                Some(Vec::new())
            } else {
                Some(
                    std::slice::from_raw_parts(raw.per_device_bytes, raw.num_devices_listed)
                        .to_vec(),
                )
            };
            Ok(Some(Memory {
                devices: raw.devices,
                unsharded_bytes: raw.unsharded_bytes,
                max_bytes: raw.max_bytes,
                min_bytes: raw.min_bytes,
                mean_bytes: raw.mean_bytes,
                max_device: raw.max_device,
                per_device_bytes,
            }))
        }
    }

    /// The training memory of a result (since 0.9); `None` when there is
    /// none: the document has no `training` section, no plan was made (a
    /// plan made by [`Document::plan`], or the document's own plan once every
    /// check passed), or the mesh has more than 2^24 devices.
    pub fn training(&self) -> Result<Option<Training>, Error> {
        let mut raw = ffi::sp_training {
            worst_device: 0,
            worst_coordinates: ptr::null(),
            num_axes: 0,
            params: 0,
            grads: 0,
            master: 0,
            optimizer: 0,
            gathered: 0,
            activations: 0,
            total: 0,
            max_total_bytes: 0,
            min_total_bytes: 0,
            mean_total_bytes: 0.0,
            per_device_total_bytes: ptr::null(),
            num_devices_listed: 0,
        };
        let mut present: c_int = 0;
        // SAFETY: self.raw is a live result; worst_coordinates and
        // per_device_total_bytes, owned by it, point to num_axes and
        // num_devices_listed values (or are NULL) and are copied before
        // returning.
        unsafe {
            take_error(ffi::sp_result_training(
                self.raw.as_ptr(),
                &mut raw,
                &mut present,
            ))?;
            if present == 0 {
                return Ok(None);
            }
            let copy = |data: *const u64, len: usize| -> Option<Vec<u64>> {
                if data.is_null() {
                    None
                } else if len == 0 {
                    Some(Vec::new())
                } else {
                    Some(std::slice::from_raw_parts(data, len).to_vec())
                }
            };
            Ok(Some(Training {
                worst_device: raw.worst_device,
                worst_coordinates: copy(raw.worst_coordinates, raw.num_axes).unwrap_or_default(),
                params: raw.params,
                grads: raw.grads,
                master: raw.master,
                optimizer: raw.optimizer,
                gathered: raw.gathered,
                activations: raw.activations,
                total: raw.total,
                max_total_bytes: raw.max_total_bytes,
                min_total_bytes: raw.min_total_bytes,
                mean_total_bytes: raw.mean_total_bytes,
                per_device_total_bytes: copy(raw.per_device_total_bytes, raw.num_devices_listed),
            }))
        }
    }

    /// The number of plan entries (0 when the result was not planned).
    pub fn plan_entry_count(&self) -> usize {
        self.plan_count
    }

    /// Plan entry `index` (0-based, plan order); an index past the end is
    /// an [`ErrorCode::OutOfRange`] error from the library.
    pub fn plan_entry(&self, index: usize) -> Result<PlanEntry, Error> {
        let mut raw = ffi::sp_plan_entry {
            fqn: out_str(),
            provenance: out_str(),
        };
        // SAFETY: self.raw is a live result; its strings are copied.
        unsafe {
            take_error(ffi::sp_result_plan_entry(
                self.raw.as_ptr(),
                index,
                &mut raw,
            ))?;
            Ok(PlanEntry {
                fqn: copy_str(raw.fqn).unwrap_or_default(),
                provenance: copy_str(raw.provenance).unwrap_or_default(),
            })
        }
    }

    /// All plan entries, in plan order.
    pub fn plan_entries(&self) -> Result<Vec<PlanEntry>, Error> {
        (0..self.plan_count)
            .map(|index| self.plan_entry(index))
            .collect()
    }

    /// The number of communication records (0 when the result was not
    /// planned).
    pub fn communication_count(&self) -> usize {
        self.communication_count
    }

    /// Communication record `index` (0-based: plan order, ports, mesh axes);
    /// an index past the end is an [`ErrorCode::OutOfRange`] error from the
    /// library.
    pub fn communication(&self, index: usize) -> Result<Communication, Error> {
        let mut raw = ffi::sp_communication {
            fqn: out_str(),
            port: out_str(),
            axis: out_str(),
            from: out_str(),
            to: out_str(),
            collective: out_str(),
        };
        // SAFETY: self.raw is a live result; its strings are copied.
        unsafe {
            take_error(ffi::sp_result_communication(
                self.raw.as_ptr(),
                index,
                &mut raw,
            ))?;
            Ok(Communication {
                fqn: copy_str(raw.fqn).unwrap_or_default(),
                port: copy_str(raw.port).unwrap_or_default(),
                axis: copy_str(raw.axis).unwrap_or_default(),
                from: copy_str(raw.from).unwrap_or_default(),
                to: copy_str(raw.to).unwrap_or_default(),
                collective: copy_str(raw.collective).unwrap_or_default(),
            })
        }
    }

    /// All communication records, in order (plan order, ports, mesh axes).
    pub fn communications(&self) -> Result<Vec<Communication>, Error> {
        (0..self.communication_count)
            .map(|index| self.communication(index))
            .collect()
    }
}

impl Drop for CheckResult {
    fn drop(&mut self) {
        // SAFETY: the handle is owned and deleted exactly once.
        unsafe { ffi::sp_result_delete(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for CheckResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CheckResult")
            .field("ok", &self.ok)
            .field("diagnostic_count", &self.count)
            .field("plan_entry_count", &self.plan_count)
            .field("communication_count", &self.communication_count)
            .field("group_count", &self.group_count)
            .finish()
    }
}

// ---- Layouts ----------------------------------------------------------------

/// A port of a [`Layout`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Port {
    /// `params`: where the owned parameters live.
    Params,
    /// `in_src`: where each forward input arrives.
    InSrc,
    /// `in_dst`: where the module wants each input.
    InDst,
    /// `out_src`: where each output is produced.
    OutSrc,
    /// `out_dst`: where each output is delivered.
    OutDst,
}

impl Port {
    fn raw(self) -> ffi::sp_port {
        match self {
            Port::Params => ffi::SP_PORT_PARAMS,
            Port::InSrc => ffi::SP_PORT_IN_SRC,
            Port::InDst => ffi::SP_PORT_IN_DST,
            Port::OutSrc => ffi::SP_PORT_OUT_SRC,
            Port::OutDst => ffi::SP_PORT_OUT_DST,
        }
    }
}

/// A layout (module sharding spec) under construction: ports `params`,
/// `in_src`, `in_dst`, `out_src`, `out_dst` (each absent until declared) and
/// `out_names`. The builder copies a layout when it is passed in, so one
/// layout may be reused.
///
/// Every method returns `&mut Self`, so calls chain with `?`:
///
/// ```
/// use shardplan::{Layout, Port};
/// let mut layout = Layout::new()?;
/// layout
///     .set_placement(Port::Params, "weight", "tp", "S(0)")?
///     .add_entry(Port::InSrc, "x")?
///     .add_entry(Port::InDst, "x")?;
/// # Ok::<(), shardplan::Error>(())
/// ```
pub struct Layout {
    raw: NonNull<ffi::sp_layout>,
}

// SAFETY: a layout is plain data owned by this value; it may move between
// threads. It is not Sync: it is modified through &mut only, but the C ABI
// promises nothing about concurrent readers of a non-const handle.
unsafe impl Send for Layout {}

impl Layout {
    /// An empty layout: no port declared.
    pub fn new() -> Result<Layout, Error> {
        ensure_abi()?;
        let mut out = ptr::null_mut();
        // SAFETY: out is a valid out-parameter.
        unsafe { take_error(ffi::sp_layout_create(&mut out))? };
        match NonNull::new(out) {
            Some(raw) => Ok(Layout { raw }),
            None => Err(Error {
                code: ErrorCode::Internal,
                message: "the library returned no layout and no error".into(),
            }),
        }
    }

    /// Declares `port` as present (an empty map until entries are added);
    /// declaring it again does nothing.
    pub fn declare(&mut self, port: Port) -> Result<&mut Self, Error> {
        // SAFETY: self.raw is a live layout, exclusively borrowed.
        unsafe { take_error(ffi::sp_layout_declare(self.raw.as_ptr(), port.raw()))? };
        Ok(self)
    }

    /// Adds entry `name` to `port` (declaring the port) with no placement,
    /// like `"x": {}`; an existing entry is kept.
    pub fn add_entry(&mut self, port: Port, name: &str) -> Result<&mut Self, Error> {
        // SAFETY: self.raw is live; name is copied during the call.
        unsafe {
            take_error(ffi::sp_layout_add_entry(
                self.raw.as_ptr(),
                port.raw(),
                in_str(name),
            ))?
        };
        Ok(self)
    }

    /// Places entry `name` of `port` (created if needed) on mesh axis `axis`:
    /// `placement` is `"R"`, `"S(dim)"`, `"P"` or `"P(op)"`. A malformed
    /// placement or an axis placed twice is [`ErrorCode::InvalidArgument`].
    pub fn set_placement(
        &mut self,
        port: Port,
        name: &str,
        axis: &str,
        placement: &str,
    ) -> Result<&mut Self, Error> {
        // SAFETY: self.raw is live; the strings are copied during the call.
        unsafe {
            take_error(ffi::sp_layout_set_placement(
                self.raw.as_ptr(),
                port.raw(),
                in_str(name),
                in_str(axis),
                in_str(placement),
            ))?
        };
        Ok(self)
    }

    /// Sets `out_names`, replacing any earlier list.
    pub fn set_out_names<S: AsRef<str>>(&mut self, names: &[S]) -> Result<&mut Self, Error> {
        let names: Vec<ffi::sp_str> = names.iter().map(|name| in_str(name.as_ref())).collect();
        // SAFETY: self.raw is live; `names` and the strings it points to
        // outlive the call, which copies them.
        unsafe {
            take_error(ffi::sp_layout_set_out_names(
                self.raw.as_ptr(),
                names.as_ptr(),
                names.len(),
            ))?
        };
        Ok(self)
    }
}

impl Drop for Layout {
    fn drop(&mut self) {
        // SAFETY: the handle is owned and deleted exactly once.
        unsafe { ffi::sp_layout_delete(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Layout").finish_non_exhaustive()
    }
}

// ---- Builder ----------------------------------------------------------------

/// A parallel spec: a binding kind (`"tp"`, `"mesh"`, `"none"`, ...) and the
/// mesh axes it communicates on.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParallelSpec {
    /// The communication protocol.
    pub binding_kind: String,
    /// The mesh axes it communicates on.
    pub axes: Vec<String>,
}

impl ParallelSpec {
    /// A spec of kind `binding_kind` on `axes`.
    ///
    /// ```
    /// let spec = shardplan::ParallelSpec::new("tp", ["tp"]);
    /// assert_eq!(spec.axes, vec!["tp".to_string()]);
    /// ```
    pub fn new<I>(binding_kind: impl Into<String>, axes: I) -> ParallelSpec
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        ParallelSpec {
            binding_kind: binding_kind.into(),
            axes: axes.into_iter().map(Into::into).collect(),
        }
    }
}

/// Calls `f` with a C view of `spec` (NULL for `None`), valid during the call.
fn with_parallel<R>(
    spec: Option<&ParallelSpec>,
    f: impl FnOnce(*const ffi::sp_parallel_spec) -> R,
) -> R {
    match spec {
        None => f(ptr::null()),
        Some(spec) => {
            let axes: Vec<ffi::sp_str> = spec.axes.iter().map(|axis| in_str(axis)).collect();
            let raw = ffi::sp_parallel_spec {
                binding_kind: in_str(&spec.binding_kind),
                axes: axes.as_ptr(),
                num_axes: axes.len(),
            };
            f(&raw)
        }
    }
}

/// Builds a `shardplan.v1` document programmatically; checking the built
/// document gives the result of the equivalent JSON document
/// ([`Builder::to_json`]).
///
/// Names that must be unique (axes, ids, child and parameter names of a
/// module, FQNs) are refused when repeated ([`ErrorCode::InvalidArgument`]);
/// references (child module ids, parameter ids, the root) are resolved by
/// [`Builder::build`], and a dangling one is reported there as the
/// `invalid-document` diagnostic, with a JSON pointer into
/// [`Builder::to_json`]'s text.
///
/// ```
/// use shardplan::{Builder, CheckOptions, Layout, ParseOptions, Port};
///
/// let mut layout = Layout::new()?;
/// layout.set_placement(Port::Params, "weight", "tp", "S(0)")?
///       .add_entry(Port::InSrc, "x")?
///       .add_entry(Port::InDst, "x")?;
/// let mut b = Builder::new()?;
/// b.add_axis("tp", 2)?
///  .add_parameter("w", Some(&[4, 4]), "")?
///  .add_module("root", "")?
///  .add_child("root", "lin", "lin")?
///  .add_module("lin", "Linear")?
///  .add_forward_arg("lin", "x")?
///  .add_module_param("lin", "weight", "w")?
///  .set_root("root")?
///  .add_provider("lin", &layout)?;
/// let result = b.build(&ParseOptions::default())?.check(&CheckOptions::default())?;
/// assert!(result.ok());
/// # Ok::<(), shardplan::Error>(())
/// ```
pub struct Builder {
    raw: NonNull<ffi::sp_builder>,
}

// SAFETY: the builder is owned by this value and may move between threads;
// it is not Sync (it is modified through &mut, read through &).
unsafe impl Send for Builder {}

/// Runs one builder call and maps its error.
macro_rules! builder_call {
    ($self:ident, $call:expr) => {{
        // SAFETY: $self.raw is a live builder, exclusively borrowed; every
        // input string and array outlives the call, which copies them.
        unsafe { take_error($call)? };
        Ok($self)
    }};
}

impl Builder {
    /// An empty builder.
    pub fn new() -> Result<Builder, Error> {
        ensure_abi()?;
        let mut out = ptr::null_mut();
        // SAFETY: out is a valid out-parameter.
        unsafe { take_error(ffi::sp_builder_create(&mut out))? };
        match NonNull::new(out) {
            Some(raw) => Ok(Builder { raw }),
            None => Err(Error {
                code: ErrorCode::Internal,
                message: "the library returned no builder and no error".into(),
            }),
        }
    }

    /// Appends mesh axis `name` of `size` devices (>= 1).
    pub fn add_axis(&mut self, name: &str, size: i64) -> Result<&mut Self, Error> {
        builder_call!(
            self,
            ffi::sp_builder_add_axis(self.raw.as_ptr(), in_str(name), size)
        )
    }

    /// Adds parameter identity `id`. `shape`: `None` for an unknown shape,
    /// `Some(&[])` for a scalar. `dtype` may be empty (float32).
    pub fn add_parameter(
        &mut self,
        id: &str,
        shape: Option<&[i64]>,
        dtype: &str,
    ) -> Result<&mut Self, Error> {
        let (data, rank) = match shape {
            None => (ptr::null(), 0),
            Some(shape) => (shape.as_ptr(), shape.len()),
        };
        builder_call!(
            self,
            ffi::sp_builder_add_parameter(self.raw.as_ptr(), in_str(id), data, rank, in_str(dtype))
        )
    }

    /// Adds module identity `id`; `type_name` (the class name) may be empty.
    pub fn add_module(&mut self, id: &str, type_name: &str) -> Result<&mut Self, Error> {
        builder_call!(
            self,
            ffi::sp_builder_add_module(self.raw.as_ptr(), in_str(id), in_str(type_name))
        )
    }

    /// Appends `name` (`"x"`, `"*args"`, `"**kwargs"`) to the module's forward
    /// signature.
    pub fn add_forward_arg(&mut self, module: &str, name: &str) -> Result<&mut Self, Error> {
        builder_call!(
            self,
            ffi::sp_builder_add_forward_arg(self.raw.as_ptr(), in_str(module), in_str(name))
        )
    }

    /// Registers module `child` as child `name` of `module`.
    pub fn add_child(&mut self, module: &str, name: &str, child: &str) -> Result<&mut Self, Error> {
        builder_call!(
            self,
            ffi::sp_builder_add_child(
                self.raw.as_ptr(),
                in_str(module),
                in_str(name),
                in_str(child)
            )
        )
    }

    /// Registers parameter identity `parameter` as parameter `name` of
    /// `module`.
    pub fn add_module_param(
        &mut self,
        module: &str,
        name: &str,
        parameter: &str,
    ) -> Result<&mut Self, Error> {
        builder_call!(
            self,
            ffi::sp_builder_add_module_param(
                self.raw.as_ptr(),
                in_str(module),
                in_str(name),
                in_str(parameter)
            )
        )
    }

    /// Sets the module's own parallel spec; `None` clears it.
    pub fn set_module_parallel(
        &mut self,
        module: &str,
        parallel: Option<&ParallelSpec>,
    ) -> Result<&mut Self, Error> {
        let raw = self.raw.as_ptr();
        let error = with_parallel(parallel, |spec| {
            // SAFETY: raw is live; spec and the strings outlive the call.
            unsafe { ffi::sp_builder_set_module_parallel(raw, in_str(module), spec) }
        });
        builder_call!(self, error)
    }

    /// Makes the module a family member: `parallel` and its sharding
    /// provider's layout (`None`: it provides none).
    pub fn set_family(
        &mut self,
        module: &str,
        parallel: bool,
        sharding: Option<&Layout>,
    ) -> Result<&mut Self, Error> {
        let sharding = sharding.map_or(ptr::null(), |layout| layout.raw.as_ptr().cast_const());
        builder_call!(
            self,
            ffi::sp_builder_set_family(
                self.raw.as_ptr(),
                in_str(module),
                c_int::from(parallel),
                sharding
            )
        )
    }

    /// Sets the layout already applied to a family member (the module must
    /// be a family member).
    pub fn set_family_cached(
        &mut self,
        module: &str,
        sharding: &Layout,
        parallel: Option<&ParallelSpec>,
    ) -> Result<&mut Self, Error> {
        let raw = self.raw.as_ptr();
        let error = with_parallel(parallel, |spec| {
            // SAFETY: raw and the layout are live; spec outlives the call.
            unsafe {
                ffi::sp_builder_set_family_cached(raw, in_str(module), sharding.raw.as_ptr(), spec)
            }
        });
        builder_call!(self, error)
    }

    /// Sets the root module id.
    pub fn set_root(&mut self, module: &str) -> Result<&mut Self, Error> {
        builder_call!(
            self,
            ffi::sp_builder_set_root(self.raw.as_ptr(), in_str(module))
        )
    }

    /// Adds a model-adapter sharding provider for the module at `fqn` (`""`
    /// is the root). The layout is copied.
    pub fn add_provider(&mut self, fqn: &str, layout: &Layout) -> Result<&mut Self, Error> {
        builder_call!(
            self,
            ffi::sp_builder_add_provider(self.raw.as_ptr(), in_str(fqn), layout.raw.as_ptr())
        )
    }

    /// Appends a native request: the glob patterns, the layout (copied) and
    /// an optional parallel spec.
    pub fn add_native<S: AsRef<str>>(
        &mut self,
        globs: &[S],
        sharding: &Layout,
        parallel: Option<&ParallelSpec>,
    ) -> Result<&mut Self, Error> {
        let globs: Vec<ffi::sp_str> = globs.iter().map(|glob| in_str(glob.as_ref())).collect();
        let raw = self.raw.as_ptr();
        let error = with_parallel(parallel, |spec| {
            // SAFETY: raw and the layout are live; globs and spec outlive the call.
            unsafe {
                ffi::sp_builder_add_native(
                    raw,
                    globs.as_ptr(),
                    globs.len(),
                    sharding.raw.as_ptr(),
                    spec,
                )
            }
        });
        builder_call!(self, error)
    }

    /// Gives the document a final plan, with no entries until some are
    /// added (an empty plan is checked too: it covers no parameter).
    pub fn declare_plan(&mut self) -> Result<&mut Self, Error> {
        builder_call!(self, ffi::sp_builder_declare_plan(self.raw.as_ptr()))
    }

    /// Adds the final-plan layout of the module at `fqn` (declaring the
    /// plan). The layout is copied.
    pub fn add_plan_entry(&mut self, fqn: &str, layout: &Layout) -> Result<&mut Self, Error> {
        builder_call!(
            self,
            ffi::sp_builder_add_plan_entry(self.raw.as_ptr(), in_str(fqn), layout.raw.as_ptr())
        )
    }

    /// Gives the document its `training` section (training-v1,
    /// docs/format.md "Training"): `json` is the section's JSON text, an
    /// object such as `{"zero": 3, "device_memory": "80GiB"}`. Refused with
    /// [`ErrorCode::InvalidArgument`] (nothing changes) when it is not one,
    /// when a value in it is invalid, and when the builder already has a
    /// training section; what depends on the mesh (`shard_axes`,
    /// `activations.tensor_axis`) is checked by [`Builder::build`]. Since
    /// 0.9.
    pub fn set_training(&mut self, json: &str) -> Result<&mut Self, Error> {
        builder_call!(
            self,
            ffi::sp_builder_set_training(self.raw.as_ptr(), in_str(json))
        )
    }

    /// The document built so far as `shardplan.v1` JSON (pretty-printed).
    /// Diagnostics' JSON pointers refer to this text.
    pub fn to_json(&mut self) -> Result<String, Error> {
        let mut out = ffi::sp_str {
            data: ptr::null(),
            size: 0,
        };
        // SAFETY: self.raw is live and exclusively borrowed; the text stays
        // valid until the next to_json or deletion, and is copied now.
        unsafe {
            take_error(ffi::sp_builder_to_json(self.raw.as_ptr(), &mut out))?;
            Ok(copy_str(out).unwrap_or_default())
        }
    }

    /// Parses the document built so far, as [`Document::parse`] would parse
    /// [`Builder::to_json`]'s text. The builder stays usable.
    pub fn build(&self, options: &ParseOptions) -> Result<Document, Error> {
        let options = options.raw();
        let mut out = ptr::null_mut();
        // SAFETY: self.raw is live; options valid for the call.
        unsafe { take_error(ffi::sp_builder_build(self.raw.as_ptr(), &options, &mut out))? };
        Document::from_raw(out)
    }
}

impl Drop for Builder {
    fn drop(&mut self) {
        // SAFETY: the handle is owned and deleted exactly once.
        unsafe { ffi::sp_builder_delete(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for Builder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, size_of};

    #[test]
    fn check_abi_accepts_the_expected_version() {
        assert_eq!(EXPECTED_ABI_VERSION, 1);
        assert_eq!(check_abi(1), Ok(()));
    }

    #[test]
    fn check_abi_refuses_a_fake_version_naming_both() {
        for fake in [0u32, 2, 99] {
            let err = check_abi(fake).unwrap_err();
            assert_eq!(err.code, ErrorCode::AbiMismatch);
            assert!(
                err.message.contains(&format!("ABI version {fake}")),
                "{}",
                err.message
            );
            assert!(
                err.message.contains("expects ABI version 1"),
                "{}",
                err.message
            );
            assert_eq!(err.code.raw(), None);
        }
    }

    #[test]
    fn the_loaded_library_passes_the_check() {
        assert_eq!(abi_version(), EXPECTED_ABI_VERSION);
        assert_eq!(ensure_abi(), Ok(()));
        let parts: Vec<&str> = version().split('.').collect();
        assert_eq!(parts.len(), 3, "{}", version());
        assert!(
            parts.iter().all(|part| part.parse::<u32>().is_ok()),
            "{}",
            version()
        );
    }

    #[test]
    fn error_codes_round_trip_and_display() {
        for raw in 1..=5 {
            assert_eq!(ErrorCode::from_raw(raw).raw(), Some(raw));
        }
        assert_eq!(ErrorCode::from_raw(42), ErrorCode::Unknown(42));
        let err = Error {
            code: ErrorCode::InvalidArgument,
            message: "bad".into(),
        };
        assert_eq!(err.to_string(), "shardplan: INVALID_ARGUMENT: bad");
        let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(err);
        assert!(boxed.to_string().contains("bad"));
    }

    #[test]
    fn ports_and_severities_match_the_header() {
        let ports = [
            Port::Params,
            Port::InSrc,
            Port::InDst,
            Port::OutSrc,
            Port::OutDst,
        ];
        for (value, port) in ports.iter().enumerate() {
            assert_eq!(port.raw(), value as c_int);
        }
        assert_eq!(Severity::from_raw(0), Severity::Error);
        assert_eq!(Severity::from_raw(1), Severity::Warning);
        assert_eq!(Severity::from_raw(2), Severity::Info);
        assert_eq!(Severity::from_raw(7), Severity::Other(7));
    }

    #[test]
    fn struct_layouts_match_c() {
        let word = size_of::<usize>();
        assert_eq!(size_of::<ffi::sp_str>(), 2 * word);
        assert_eq!(size_of::<ffi::sp_parse_options>(), 24);
        assert_eq!(size_of::<ffi::sp_check_options>(), 4);
        assert_eq!(size_of::<ffi::sp_parallel_spec>(), 4 * word);
        // code, severity (padded to a word), message, fqn, parameter, pointer.
        assert_eq!(size_of::<ffi::sp_diagnostic>(), 10 * word + word.max(4));
        assert_eq!(align_of::<ffi::sp_diagnostic>(), align_of::<usize>());
        // Six 8-byte fields (uint64 x4, double, uint64), a pointer, a size_t.
        assert_eq!(size_of::<ffi::sp_memory>(), 48 + 2 * word);
        assert_eq!(align_of::<ffi::sp_memory>(), align_of::<u64>().max(word));
        // A uint64, a pointer, a size_t, nine uint64, a double, a pointer, a size_t.
        assert_eq!(size_of::<ffi::sp_training>(), 88 + 4 * word);
        assert_eq!(align_of::<ffi::sp_training>(), align_of::<u64>().max(word));
        assert_eq!(size_of::<ffi::sp_plan_entry>(), 4 * word);
        assert_eq!(size_of::<ffi::sp_communication>(), 12 * word);
        assert_eq!(size_of::<ffi::sp_fix_operation>(), 8 * word);
        // code, severity (padded to a word), pointer, count, listed, num_listed.
        assert_eq!(
            size_of::<ffi::sp_diagnostic_group>(),
            7 * word + word.max(4)
        );
        assert_eq!(align_of::<ffi::sp_diagnostic_group>(), align_of::<usize>());
    }

    /// The byte offset of `field` in a `$ty` (no `offset_of!`: rust-version 1.70).
    macro_rules! offset {
        ($ty:ty, $field:ident) => {{
            let value = std::mem::MaybeUninit::<$ty>::uninit();
            let base = value.as_ptr();
            // SAFETY: only the address of the field is taken, nothing is read.
            let field = unsafe { ptr::addr_of!((*base).$field) };
            field as usize - base as usize
        }};
    }

    #[test]
    fn planning_struct_fields_match_the_header() {
        let word = size_of::<usize>();
        let fields = [
            offset!(ffi::sp_memory, devices),
            offset!(ffi::sp_memory, unsharded_bytes),
            offset!(ffi::sp_memory, max_bytes),
            offset!(ffi::sp_memory, min_bytes),
            offset!(ffi::sp_memory, mean_bytes),
            offset!(ffi::sp_memory, max_device),
            offset!(ffi::sp_memory, per_device_bytes),
        ];
        assert_eq!(fields, [0, 8, 16, 24, 32, 40, 48]);
        assert_eq!(offset!(ffi::sp_memory, num_devices_listed), 48 + word);
        let training = [
            offset!(ffi::sp_training, worst_device),
            offset!(ffi::sp_training, worst_coordinates),
            offset!(ffi::sp_training, num_axes),
            offset!(ffi::sp_training, params),
            offset!(ffi::sp_training, grads),
            offset!(ffi::sp_training, master),
            offset!(ffi::sp_training, optimizer),
            offset!(ffi::sp_training, gathered),
            offset!(ffi::sp_training, activations),
            offset!(ffi::sp_training, total),
            offset!(ffi::sp_training, max_total_bytes),
            offset!(ffi::sp_training, min_total_bytes),
            offset!(ffi::sp_training, mean_total_bytes),
            offset!(ffi::sp_training, per_device_total_bytes),
            offset!(ffi::sp_training, num_devices_listed),
        ];
        let base = 8 + 2 * word; // worst_device, worst_coordinates, num_axes
        let mut want = vec![0, 8, 8 + word];
        want.extend((0..10).map(|k| base + 8 * k));
        want.extend([base + 80, base + 80 + word]);
        assert_eq!(training.to_vec(), want);
        assert_eq!(offset!(ffi::sp_plan_entry, provenance), 2 * word);
        let records = [
            offset!(ffi::sp_communication, fqn),
            offset!(ffi::sp_communication, port),
            offset!(ffi::sp_communication, axis),
            offset!(ffi::sp_communication, from),
            offset!(ffi::sp_communication, to),
            offset!(ffi::sp_communication, collective),
        ];
        let want: Vec<usize> = (0..6).map(|i| 2 * word * i).collect();
        assert_eq!(records.to_vec(), want);
    }

    #[test]
    fn help_fix_and_group_struct_fields_match_the_header() {
        let word = size_of::<usize>();
        let ops = [
            offset!(ffi::sp_fix_operation, op),
            offset!(ffi::sp_fix_operation, path),
            offset!(ffi::sp_fix_operation, from),
            offset!(ffi::sp_fix_operation, value),
        ];
        assert_eq!(ops, [0, 2 * word, 4 * word, 6 * word]);
        let severity_end = 2 * word + 4;
        let after_severity = (severity_end + word - 1) / word * word;
        let group = [
            offset!(ffi::sp_diagnostic_group, code),
            offset!(ffi::sp_diagnostic_group, severity),
            offset!(ffi::sp_diagnostic_group, pointer),
            offset!(ffi::sp_diagnostic_group, count),
            offset!(ffi::sp_diagnostic_group, listed),
            offset!(ffi::sp_diagnostic_group, num_listed),
        ];
        assert_eq!(
            group,
            [
                0,
                2 * word,
                after_severity,
                after_severity + 2 * word,
                after_severity + 3 * word,
                after_severity + 4 * word
            ]
        );
    }

    #[test]
    fn fix_operations_display_as_json_patch_objects() {
        let moved = FixOperation {
            op: "move".into(),
            path: "/providers/sharding/proj".into(),
            from: Some("/providers/sharding/porj".into()),
            value: None,
        };
        assert_eq!(
            moved.to_string(),
            r#"{"op":"move","from":"/providers/sharding/porj","path":"/providers/sharding/proj"}"#
        );
        let replaced = FixOperation {
            op: "replace".into(),
            path: "/a\"b\\c\n\u{1}é".into(),
            from: None,
            value: Some(r#"["x"]"#.into()),
        };
        assert_eq!(
            replaced.to_string(),
            r#"{"op":"replace","path":"/a\"b\\c\n\u0001é","value":["x"]}"#
        );
    }

    #[test]
    fn copy_str_distinguishes_absent_from_empty() {
        let absent = ffi::sp_str {
            data: ptr::null(),
            size: 0,
        };
        let empty = ffi::sp_str {
            data: "".as_ptr().cast(),
            size: 0,
        };
        let text = in_str("héllo");
        unsafe {
            assert_eq!(copy_str(absent), None);
            assert_eq!(copy_str(empty), Some(String::new()));
            assert_eq!(copy_str(text), Some("héllo".to_string()));
        }
    }

    #[test]
    fn handles_are_send_and_sync_as_documented() {
        fn send_sync<T: Send + Sync>() {}
        fn send<T: Send>() {}
        send_sync::<Document>();
        send_sync::<CheckResult>();
        send::<Builder>();
        send::<Layout>();
        send_sync::<Error>();
        send_sync::<Memory>();
        send_sync::<PlanEntry>();
        send_sync::<Communication>();
        send_sync::<FixOperation>();
        send_sync::<DiagnosticGroup>();
    }
}
