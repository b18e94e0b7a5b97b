//! The delivery model.
