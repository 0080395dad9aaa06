; COBOL tags for hybridmap: programs and data items. Paragraph and section headers are left out:
; the grammar gives each as one token with its period ("ADD-ITEM."), which no PERFORM names.
(program_definition (identification_division (program_name) @name.definition.module)) @definition.module
(data_description (entry_name) @name.definition.variable) @definition.variable
(file_description_entry (WORD) @name.definition.variable) @definition.variable

(qualified_word (WORD) @name.reference.call)
(perform_procedure (label (qualified_word (WORD) @name.reference.call)))
