//! Plans a document with a `training` section and prints the training memory
//! of its worst device, the totals over devices and the verdict; then shows
//! the builder refusing an invalid training section.

use shardplan::{Builder, CheckOptions, Document, ParseOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: training FILE")?;
    let doc = Document::parse(std::fs::read(&path)?, &ParseOptions::default())?;
    let result = doc.plan(&CheckOptions::default())?;
    let t = result.training()?.ok_or("no training section")?;
    println!(
        "worst device {} at {:?}: params {}, grads {}, master {}, optimizer {}, gathered {}, activations {}, total {}",
        t.worst_device, t.worst_coordinates, t.params, t.grads, t.master, t.optimizer,
        t.gathered, t.activations, t.total
    );
    println!(
        "totals: max {}, min {}, mean {}, per device {:?}",
        t.max_total_bytes,
        t.min_total_bytes,
        t.mean_total_bytes,
        t.per_device_total_bytes.unwrap_or_default()
    );
    for d in result.diagnostics()? {
        println!("{d}");
    }
    let mut b = Builder::new()?;
    if let Err(e) = b.set_training(r#"{"zero": 4}"#) {
        println!("{e}");
    }
    Ok(())
}
