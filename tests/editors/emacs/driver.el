;;; driver.el --- drive prose-ls from batch Emacs through prose-mode and eglot  -*- lexical-binding: t; -*-
;;
;;   PROSE_EMACS_LISP=editors/emacs PROSE_SERVER_CMD='["python3", "-m", "openprose.lsp"]' \
;;   PROSE_OUT=result.json emacs --batch -Q -l driver.el path/to/file.prose
;;
;; Every step runs under `condition-case' and records what the editor shows; the steps go to
;; PROSE_OUT as JSON and Emacs exits.  tests/editors/test_emacs.py writes the program and
;; asserts on the results.
;;
;; Batch-mode facts: -Q does not activate ELPA packages (Debian's elpa directories are added to
;; `load-path'); didChange is sent from an idle timer and idle timers never fire in --batch,
;; so the driver calls `eglot--signal-textDocument/didChange' after each edit; flymake is
;; started by hand for the same reason.

(dolist (dir (file-expand-wildcards "/usr/share/emacs/site-lisp/elpa/*"))
  (when (file-directory-p dir) (add-to-list 'load-path dir)))
(require 'json)
(require 'cl-lib)
(require 'subr-x)

(defvar prose-test-out (or (getenv "PROSE_OUT") "emacs-result.json"))
(defvar prose-test-timeout (string-to-number (or (getenv "PROSE_TIMEOUT_S") "15")))
(defvar prose-test-deadline (string-to-number (or (getenv "PROSE_DEADLINE_S") "60")))
(defvar prose-test-t0 (float-time))
(defvar prose-test-steps nil)
(defvar prose-test-error nil)

(defun prose-test-ms () (round (* 1000 (- (float-time) prose-test-t0))))

(defun prose-test-write ()
  (condition-case e
      (prose-test-write-1)
    (error
     (with-temp-file prose-test-out
       (insert (json-encode `((error . ,(format "could not write the results: %S" e)))))))))

(defun prose-test-write-1 ()
  (let ((json-encoding-pretty-print nil))
    (with-temp-file prose-test-out
      (insert (json-encode
               `((emacs . ,emacs-version)
                 (eglot . ,(and (featurep 'eglot)
                                (ignore-errors
                                  (with-temp-buffer
                                    (insert-file-contents (locate-library "eglot.el"))
                                    (and (re-search-forward "^;; Version: \\(.*\\)$" nil t)
                                         (match-string 1))))))
                 (error . ,prose-test-error)
                 (total_ms . ,(prose-test-ms))
                 (steps . ,(vconcat (reverse prose-test-steps)))))))))

(defun prose-test-bail (message)
  (setq prose-test-error message)
  (prose-test-write)
  (kill-emacs 3))

;; Whatever happens, write what we have and exit.
(run-at-time prose-test-deadline nil
             (lambda () (prose-test-bail (format "no result in %s s" prose-test-deadline))))

(defmacro prose-test-step (name &rest body)
  "Run BODY as the step NAME and record its value or its error."
  (declare (indent 1))
  `(let ((value nil) (ok nil) (err nil))
     (condition-case e
         (setq value (progn ,@body) ok t)
       (error (setq err (error-message-string e))))
     (push `((name . ,,name) (ok . ,(if ok t :json-false)) (value . ,value) (error . ,err)
             (t_ms . ,(prose-test-ms)))
           prose-test-steps)
     ok))

(defun prose-test-wait (pred &optional timeout)
  (let ((deadline (+ (float-time) (or timeout prose-test-timeout))))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.02))
    (funcall pred)))

(defun prose-test-lines ()
  (vconcat (split-string (buffer-substring-no-properties (point-min) (point-max)) "\n")))

(defun prose-test-goto (regexp &optional group)
  "Move to the start of REGEXP's first match (or of its GROUP) in the buffer."
  (goto-char (point-min))
  (unless (re-search-forward regexp nil t) (error "Not found: %s" regexp))
  (goto-char (match-beginning (or group 0))))

(defun prose-test-face-at (regexp &optional offset)
  (save-excursion
    (prose-test-goto regexp)
    (let ((face (get-text-property (+ (point) (or offset 0)) 'face)))
      (format "%s" (if (and (consp face) (null (cdr face))) (car face) face)))))

(defun prose-test-diagnostics ()
  (mapcar (lambda (d)
            `((line . ,(1- (line-number-at-pos (flymake-diagnostic-beg d))))
              (col . ,(save-excursion (goto-char (flymake-diagnostic-beg d)) (current-column)))
              (type . ,(format "%s" (flymake-diagnostic-type d)))
              (text . ,(flymake-diagnostic-text d))))
          (flymake-diagnostics)))

(defun prose-test-has-e007 ()
  (cl-some (lambda (d) (string-match-p "E007" (alist-get 'text d))) (prose-test-diagnostics)))

(defun prose-test-changed ()
  "Tell the server about the edits (idle timers never fire in batch mode)."
  (eglot--signal-textDocument/didChange)
  (flymake-start))

(defun prose-test-run (file)
  (prose-test-step "load"
    (add-to-list 'load-path (getenv "PROSE_EMACS_LISP"))
    (require 'prose-mode)
    (require 'eglot)
    (setq prose-ls-command (append (json-read-from-string (getenv "PROSE_SERVER_CMD")) nil)
          prose-ls-initialization-options '(:debounce 0)
          eglot-sync-connect prose-test-timeout
          eglot-connect-timeout prose-test-timeout
          eglot-autoshutdown t
          eglot-events-buffer-size 0
          make-backup-files nil
          create-lockfiles nil)
    (if (assoc 'prose-mode eglot-server-programs) t :json-false))

  (find-file file)

  (prose-test-step "mode"
    `((major_mode . ,(format "%s" major-mode))
      (indent_line_function . ,(format "%s" indent-line-function))
      (comment_start . ,comment-start)
      (indent_tabs_mode . ,(if indent-tabs-mode t :json-false))
      (format_on_save . ,(if prose-format-on-save-mode t :json-false))))

  (prose-test-step "highlight"
    (font-lock-ensure)
    `((agent_keyword . ,(prose-test-face-at "^agent"))
      (agent_name . ,(prose-test-face-at "^agent \\(writer\\)" 6))
      (model . ,(prose-test-face-at "sonnet"))
      (property . ,(prose-test-face-at "model:"))
      (comment . ,(prose-test-face-at "^# A brief" 2))
      (string . ,(prose-test-face-at "\"Write" 2))
      (triple_string . ,(prose-test-face-at "open questions"))
      (after_triple_string . ,(prose-test-face-at "^  context: draft" 2))
      (interpolation . ,(prose-test-face-at "{draft}" 1))
      (discretion . ,(prose-test-face-at "\\*\\*the" 3))
      (agent_ref . ,(prose-test-face-at "session: editor" 9))
      (variable . ,(prose-test-face-at "let draft" 4))))

  (unless (prose-test-step "attach"
            (apply #'eglot (eglot--guess-contact))
            (unless (prose-test-wait #'eglot-managed-p) (error "Eglot does not manage the buffer"))
            (let ((server (eglot-current-server)))
              `((root . ,(expand-file-name (project-root (eglot--project server))))
                (command . ,(vconcat (process-command (jsonrpc--process server)))))))
    (error "Eglot did not start"))

  (prose-test-step "diagnostics"
    (flymake-start)
    (unless (prose-test-wait #'prose-test-has-e007) (error "No E007 diagnostic"))
    (vconcat (prose-test-diagnostics)))

  (prose-test-step "hover"
    (prose-test-goto "session: \\(writer\\)" 1)
    (let* ((hover (jsonrpc-request (eglot-current-server) :textDocument/hover
                                   (eglot--TextDocumentPositionParams)))
           (contents (plist-get hover :contents)))
      (if (stringp contents) contents (plist-get contents :value))))

  (prose-test-step "definition"
    (prose-test-goto "session: \\(writer\\)" 1)
    (let ((from (1- (line-number-at-pos))))
      (call-interactively #'xref-find-definitions)
      `((from . ,from)
        (line . ,(1- (line-number-at-pos)))
        (col . ,(current-column))
        (same_buffer . ,(if (equal (buffer-file-name) (expand-file-name file)) t :json-false)))))

  (prose-test-step "completion"
    (goto-char (point-max))
    (insert "let extra = session: ")
    (prose-test-changed)
    (let* ((capf (run-hook-with-args-until-success 'completion-at-point-functions))
           (labels (and capf (all-completions "" (nth 2 capf)))))
      (delete-region (line-beginning-position) (point-max))
      (prose-test-changed)
      `((eglot_capf . ,(if (memq #'eglot-completion-at-point completion-at-point-functions)
                           t :json-false))
        (labels . ,(vconcat labels)))))

  (prose-test-step "rename"
    (prose-test-goto "let \\(draft\\)" 1)
    (eglot-rename "outline")
    (prose-test-changed)
    (prose-test-lines))

  (prose-test-step "diagnostics_after_edit"
    (prose-test-goto "^let outline")
    (insert "agent editor:\n  model: opus\n\n")
    (prose-test-changed)
    `((cleared . ,(if (prose-test-wait (lambda () (not (prose-test-has-e007)))) t :json-false))
      (diagnostics . ,(vconcat (prose-test-diagnostics)))))

  (prose-test-step "format"
    (let ((before (prose-test-lines)))
      (eglot-format-buffer)
      `((before . ,before) (after . ,(prose-test-lines)))))

  (prose-test-step "format_on_save"
    (prose-test-goto "^  model: sonnet")
    (delete-region (point) (progn (forward-line 2) (point)))
    (insert "      model: sonnet\n      prompt: \"You write \\\"plain\\\" briefs\"\n")
    (prose-test-changed)
    (let ((before (prose-test-lines)))
      (save-buffer)
      `((before . ,before)
        (buffer . ,(prose-test-lines))
        (disk . ,(with-temp-buffer
                   (insert-file-contents file)
                   (prose-test-lines))))))

  (prose-test-step "indent"
    (let ((samples (json-read-from-string (getenv "PROSE_INDENT_SAMPLES")))
          (out nil))
      (dolist (sample samples)
        (with-temp-buffer
          (insert (cdr sample))
          (prose-mode)
          (indent-region (point-min) (point-max))
          (push (cons (car sample) (buffer-substring-no-properties (point-min) (point-max)))
                out)))
      ;; Typing: RET (`newline-and-indent') and `:' (`self-insert-command', which runs
      ;; the mode's electric colon) as a person types them.
      (with-temp-buffer
        (prose-mode)
        (cl-flet ((type (text)
                    (dolist (char (string-to-list text))
                      (let ((last-command-event char))
                        (pcase char
                          (?\n (newline-and-indent))
                          (?\t (indent-for-tab-command))
                          (_ (self-insert-command 1)))))))
          (type "agent a:\nmodel: opus\nprompt: \"p\"\n")
          (push (cons 'after_property (current-indentation)) out)
          (type "let x = session: a\t\nprompt: \"q\"\nif **c**:\t\nsession \"a\"\nelse:")
          (push (cons 'else_typed (current-indentation)) out)
          (type "\nsession \"b\"")
          (push (cons 'typed (buffer-substring-no-properties (point-min) (point-max))) out)
          (comment-region (point-min) (save-excursion (goto-char (point-min)) (line-end-position)))
          (goto-char (point-min))
          (push (cons 'commented (buffer-substring-no-properties (point) (line-end-position)))
                out)))
      out)))

(let ((file (car command-line-args-left)))
  (setq command-line-args-left nil)
  (condition-case e
      (prose-test-run (expand-file-name file))
    (error (setq prose-test-error (error-message-string e))))
  (prose-test-write)
  (ignore-errors
    (let ((server (eglot-current-server)))
      (when server
        (let ((process (jsonrpc--process server)))
          (eglot-shutdown server)
          (prose-test-wait (lambda () (not (process-live-p process))) 5)
          (push `((name . "shutdown") (ok . ,(if (process-live-p process) :json-false t))
                  (value . nil) (error . nil) (t_ms . ,(prose-test-ms)))
                prose-test-steps)
          (prose-test-write)))))
  (kill-emacs (if prose-test-error 1 0)))
