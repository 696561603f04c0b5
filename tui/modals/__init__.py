"""Small dialogs over a screen (note, flag, labels, verdict): each a `ModalScreen[T]` that returns its
result through `dismiss(value)` — None when esc cancels — to the caller's push_screen callback."""
