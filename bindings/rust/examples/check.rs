//! Checks a shardplan.v1 document: `cargo run --example check -- FILE`.
//! Prints the verdict and each diagnostic; exits with 1 when the document fails.
use shardplan::{CheckOptions, Document, ParseOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: check FILE")?;
    let doc = Document::parse(std::fs::read(&path)?, &ParseOptions::default())?;
    let result = doc.check(&CheckOptions::default())?;
    println!(
        "{path}: ok={} diagnostics={}",
        result.ok(),
        result.diagnostic_count()
    );
    for d in result.diagnostics()? {
        println!("  {d}");
    }
    std::process::exit(if result.ok() { 0 } else { 1 });
}
