//! Studies: published figures, and a scenario's results set beside them with
//! a verdict on each.

pub mod brooker_2022;
pub mod brooker_2023;
pub mod brooker_2023_collapse;
pub mod brooker_2023_queue;
pub mod compare;
pub mod error;
pub mod overload;
pub mod published;
pub mod reference;
pub mod server_compare;
pub mod yandex_2024;
