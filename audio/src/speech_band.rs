//! [`SpeechBand`]: the band-pass filter the voice activity detector measures energy
//! through, so that noise outside the band where speech carries its energy (hum and rumble
//! below it, hiss above it) does not count.

use std::f64::consts::PI;

/// Lower edge of the band, in Hz (below: hum, rumble, handling noise).
pub const SPEECH_BAND_LOW_HZ: f64 = 200.0;

/// Upper edge of the band, in Hz (telephone band: most of speech's energy and all of what
/// tells it apart from noise sits below it).
pub const SPEECH_BAND_HIGH_HZ: f64 = 3_400.0;

/// One second-order section (RBJ cookbook), transposed direct form II.
#[derive(Debug, Clone, Copy)]
struct Biquad {
    b: [f64; 3],
    a: [f64; 2],
    z: [f64; 2],
}

impl Biquad {
    fn new(b: [f64; 3], a0: f64, a: [f64; 2]) -> Biquad {
        Biquad {
            b: b.map(|v| v / a0),
            a: a.map(|v| v / a0),
            z: [0.0; 2],
        }
    }

    /// Butterworth (Q = 1/√2) high-pass or low-pass at `hz`.
    fn butterworth(high_pass: bool, hz: f64, rate: f64) -> Biquad {
        let w0 = 2.0 * PI * hz / rate;
        let (sin, cos) = w0.sin_cos();
        let alpha = sin / std::f64::consts::SQRT_2;
        let b = if high_pass {
            [(1.0 + cos) / 2.0, -(1.0 + cos), (1.0 + cos) / 2.0]
        } else {
            [(1.0 - cos) / 2.0, 1.0 - cos, (1.0 - cos) / 2.0]
        };
        Biquad::new(b, 1.0 + alpha, [-2.0 * cos, 1.0 - alpha])
    }

    fn step(&mut self, x: f64) -> f64 {
        let y = self.b[0] * x + self.z[0];
        self.z[0] = self.b[1] * x - self.a[0] * y + self.z[1];
        self.z[1] = self.b[2] * x - self.a[1] * y;
        y
    }
}

/// A 200–3400 Hz band-pass (second-order Butterworth high-pass and low-pass in cascade).
/// It keeps its state from one frame to the next, as one continuous signal.
#[derive(Debug, Clone)]
pub struct SpeechBand {
    high_pass: Biquad,
    low_pass: Biquad,
}

impl SpeechBand {
    /// The band at `sample_rate` Hz (the upper edge is kept below 45% of the rate).
    pub fn new(sample_rate: u32) -> SpeechBand {
        let rate = f64::from(sample_rate.max(1));
        SpeechBand {
            high_pass: Biquad::butterworth(true, SPEECH_BAND_LOW_HZ.min(rate * 0.2), rate),
            low_pass: Biquad::butterworth(false, SPEECH_BAND_HIGH_HZ.min(rate * 0.45), rate),
        }
    }

    /// The next filtered sample, for a sample in full-scale units (-1..1).
    pub fn step(&mut self, x: f64) -> f64 {
        self.low_pass.step(self.high_pass.step(x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gain_at(hz: f64) -> f64 {
        let mut band = SpeechBand::new(16_000);
        let (mut energy_in, mut energy_out) = (0.0, 0.0);
        for i in 0..16_000 {
            let x = (2.0 * PI * hz * f64::from(i) / 16_000.0).sin();
            let y = band.step(x);
            if i >= 8_000 {
                energy_in += x * x;
                energy_out += y * y;
            }
        }
        10.0 * (energy_out / energy_in).log10()
    }

    #[test]
    fn the_band_passes_speech_and_cuts_hum_and_hiss() {
        assert!(gain_at(1_000.0).abs() < 0.5, "{}", gain_at(1_000.0));
        assert!(gain_at(50.0) < -20.0, "{}", gain_at(50.0));
        assert!(gain_at(7_000.0) < -15.0, "{}", gain_at(7_000.0));
    }
}
