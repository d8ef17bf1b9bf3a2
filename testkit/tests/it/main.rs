//! The test servers' own tests: each documented rule of the stand-ins, checked against the server.

mod ink_testserver;
mod testserver_drive;
mod testserver_graph;
mod testserver_notion;
mod testserver_notion_moves;
mod testserver_teams;
