"""Built-in solver plugins. Each sub-package registers through ``glasswork.hooks.specs``, exactly as a
third-party plugin does; the registry finds them by listing this package."""
