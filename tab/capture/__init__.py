"""Capture: what each observation adds to the tab's read log and candidates, never running anything.

`observe.Capture` is the entry point; `lexer` splits bash text into pipelines, `command_table` holds
the command forms, `pipelines` and `command_output` decide what each pipeline shows, `attribution`
splits an output among files, `listings` reads file names out of listings, `notices` strips what is
not file content, `workspace_files` answers which tokens name workspace files and `originals` says
which files were there when the tab attached.
"""
