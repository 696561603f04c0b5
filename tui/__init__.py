"""memscope's Textual app. Imports scorer; scorer never imports this package."""
