; Chatito tags for hybridmap: %[intent] is what the trained bot answers to (a function),
; @[slot] an entity it fills (a variable), ~[alias] a reusable expansion (a macro).
(intent_def (intent) @name.definition.function) @definition.function
(slot_def (slot) @name.definition.variable) @definition.variable
(alias_def (alias) @name.definition.macro) @definition.macro

(slot_ref (slot) @name.reference.call)
(alias_ref (alias) @name.reference.call)
(import (file) @name.reference.module)
