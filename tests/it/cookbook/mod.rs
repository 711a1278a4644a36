//! The cookbook (`examples/cookbook/`): every example runs offline from its bundled
//! cassette or recording and prints exactly its bundled output; each bundled cassette is
//! its script recorded, byte for byte. One module per example, named `exNN_name`.

#[allow(dead_code)] // each example's test uses its own part of it
#[path = "../../support/example_process.rs"]
mod example_process;
mod support;

mod ex01_foundations;
mod ex02_combinators;
mod ex03_composition;
mod ex11_route_branching;
mod ex12_fallback_chain;
mod ex13_review_loop;
mod ex14_map_over;
mod ex15_middleware_stack;
mod ex16_context_engineering;
mod ex17_evaluation_suite;
mod ex18_artifacts;
mod ex19_agent_tool;
mod ex20_supervised;
mod ex21_full_algebra;
mod ex22_contract_testing;
mod ex23_deep_research;
mod ex24_customer_support;
mod ex25_code_review;
mod ex26_dispatch_join;
mod ex27_race_timeout;
mod ex29_live_voice;
mod ex30_production_pipeline;
mod ex34_tool_policies;
mod ex35_session_persistence;
mod ex36_mcp_tools;
mod ex37_governed_flow;
mod ex38_extraction;
mod ex39_booking;
mod ex40_screening;
