//! The report's exporters, as seed 001 lists them: JSON, JUnit XML, Markdown, TRX.
//!
//! Every exporter is a function of the report alone: no clock, no host name, ids derived
//! from names. Text from recordings (answers, tool arguments, judges' reasons) is escaped
//! for each format: XML specials as entities and characters XML 1.0 cannot hold dropped;
//! Markdown's table and HTML specials escaped.

mod json;
mod junit;
mod markdown;
mod trx;
mod xml;

use std::str::FromStr;

use crate::report::EvaluationReport;

pub use json::to_json;
pub use junit::to_junit;
pub use markdown::to_markdown;
pub use trx::to_trx;

/// An export format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The report as pretty JSON.
    Json,
    /// JUnit XML: a test suite per recording, a test case per case.
    Junit,
    /// Markdown, for a pull-request comment.
    Markdown,
    /// Visual Studio's TRX.
    Trx,
}

/// A format name that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format {given:?}: json, junit, markdown or trx")]
pub struct UnknownFormat {
    /// The name given.
    pub given: String,
}

impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "json" => Ok(Format::Json),
            "junit" => Ok(Format::Junit),
            "markdown" => Ok(Format::Markdown),
            "trx" => Ok(Format::Trx),
            other => Err(UnknownFormat {
                given: other.to_owned(),
            }),
        }
    }
}

/// `report` in `format`, ending with a newline.
pub fn render(report: &EvaluationReport, format: Format) -> String {
    match format {
        Format::Json => to_json(report),
        Format::Junit => to_junit(report),
        Format::Markdown => to_markdown(report),
        Format::Trx => to_trx(report),
    }
}
