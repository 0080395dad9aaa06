; inherits: cpp
; Arduino tags for hybridmap.
; The Arduino grammar is tree-sitter-cpp plus Arduino's built-in constants and functions, so sketches
; (`setup`, `loop`, helper classes and functions spread over several `.ino` tabs) are fully covered by the
; inherited C++ patterns; nothing Arduino-specific needs its own pattern.
