// Keeps the GPU busy for a given number of SM clock cycles (one thread).
//
// Launched just before a timed interval: while it spins, the host enqueues the
// start event, the timed launches and the stop event, so the interval measures
// the GPU's work alone and not how fast Python can issue the first launches.

extern "C" __global__ void hold(long long cycles)
{
    const long long start = clock64();
    while (clock64() - start < cycles) {
    }
}
