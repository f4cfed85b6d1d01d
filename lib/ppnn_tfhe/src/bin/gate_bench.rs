//! Pure-Rust reference timing: N AND gates, one at a time, tfhe-rs `DEFAULT_PARAMETERS`.
//!
//! Usage: gate_bench [N]   (default 20)
//! Prints one line of JSON, read by benchmarks/bench_tfhe_binding.py:
//! {"gates": N, "ms_per_gate": ..., "parameters": "DEFAULT_PARAMETERS", "tfhe": "1.8.2"}

use std::time::Instant;

use tfhe::boolean::client_key::ClientKey;
use tfhe::boolean::parameters::DEFAULT_PARAMETERS;
use tfhe::boolean::server_key::{BinaryBooleanGates, ServerKey};

fn main() {
    let n: usize = match std::env::args().nth(1) {
        None => 20,
        Some(s) => s.parse().unwrap_or_else(|_| {
            eprintln!("usage: gate_bench [N]  (N = number of AND gates, a positive integer)");
            std::process::exit(2)
        }),
    };
    let client = ClientKey::new(&DEFAULT_PARAMETERS);
    let server = ServerKey::new(&client);
    let a: Vec<_> = (0..n).map(|i| client.encrypt(i % 2 == 0)).collect();
    let b: Vec<_> = (0..n).map(|i| client.encrypt(i % 3 == 0)).collect();

    // warm-up: FFT plans and this thread's engine buffers
    for _ in 0..2 {
        std::hint::black_box(server.and(&a[0], &b[0]));
    }

    let start = Instant::now();
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        out.push(server.and(&a[i], &b[i]));
    }
    let secs = start.elapsed().as_secs_f64();

    for (i, ct) in out.iter().enumerate() {
        assert_eq!(
            client.decrypt(ct),
            (i % 2 == 0) && (i % 3 == 0),
            "wrong AND at {i}"
        );
    }
    println!(
        "{{\"gates\": {n}, \"ms_per_gate\": {:.4}, \"parameters\": \"DEFAULT_PARAMETERS\", \
         \"tfhe\": \"1.8.2\"}}",
        1e3 * secs / n.max(1) as f64
    );
}
