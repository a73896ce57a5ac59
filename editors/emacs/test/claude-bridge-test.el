;;; claude-bridge-test.el --- ERT tests of claude-bridge.el  -*- lexical-binding: t; -*-

;;; Commentary:

;; Run from pytest (tests/editors/emacs), which starts the fake Messages
;; API and sets the environment: HOME (isolated), ANTHROPIC_BASE_URL and
;; the other offline variables, CLAUDE_BRIDGE_TEST_COMMAND (the bridge
;; command as a JSON array), CLAUDE_BRIDGE_TEST_TMP (a scratch directory)
;; and CLAUDE_BRIDGE_TEST_API (the fake API's URL).  Every test of a
;; chat drives the real bridge and the real claude CLI, and uses the
;; chat as a person does: keys typed into the chat buffer (through
;; `execute-kbd-macro', Emacs's own command loop), answered in the
;; minibuffer the same way.  Nothing of the package is replaced.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'url)
(require 'claude-bridge)

(defvar url-http-end-of-headers)

(defconst cbt-wait-seconds 60
  "Safety net of every wait; each returns as soon as its condition holds.")

(setq claude-bridge-command
      (append (json-parse-string (or (getenv "CLAUDE_BRIDGE_TEST_COMMAND")
                                     "[\"claude-bridge\"]"))
              nil))
;; Spares would double the CLI processes of every test; one test turns the pool on.
(setq claude-bridge-warm-pool 0)

(defun cbt-wait (what pred &optional seconds)
  "Wait until PRED returns non-nil and return its value; fail naming WHAT."
  (let ((deadline (+ (float-time) (or seconds cbt-wait-seconds)))
        value)
    (while (and (not (setq value (funcall pred))) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (or value (ert-fail (list "timed out waiting for" what)))))

(defun cbt-project ()
  "Return a new empty project directory (absolute, resolved, with a slash)."
  (let ((root (or (getenv "CLAUDE_BRIDGE_TEST_TMP") temporary-file-directory)))
    (file-name-as-directory
     (file-truename (make-temp-file (expand-file-name "project-" root) t)))))

(defun cbt-chat (buffer)
  "Return the chat of chat BUFFER."
  (buffer-local-value 'claude-bridge--buffer-chat buffer))

(defun cbt-state (buffer)
  "Return the state of chat BUFFER's chat."
  (claude-bridge--chat-state (cbt-chat buffer)))

(defun cbt-flush (buffer)
  "Draw what chat BUFFER has to draw now (the timer would in a moment)."
  (claude-bridge-view-flush (cbt-chat buffer)))

(defun cbt-select (buffer)
  "Show BUFFER in the selected window, at its point."
  (let ((switch-to-buffer-preserve-window-point nil))
    (switch-to-buffer buffer)))

(defun cbt-keys (buffer keys)
  "Type KEYS (a `kbd' string) in BUFFER, shown in the selected window."
  (cbt-select buffer)
  (execute-kbd-macro (kbd keys)))

(defun cbt-type (buffer text)
  "Type TEXT, character by character, at point in BUFFER."
  (cbt-select buffer)
  (execute-kbd-macro text))

(defun cbt-k (text)
  "Return TEXT as `kbd' notation: each character typed as it is."
  (mapconcat (lambda (c) (pcase c (?\s "SPC") (?\n "RET") (_ (string c)))) text " "))

(defun cbt-open-chat (dir &optional keys)
  "Open a chat from a buffer of DIR with KEYS (default M-x claude-bridge-chat RET).
Return the buffer selected afterwards."
  (switch-to-buffer (get-buffer-create " *cbt-start*"))
  (setq default-directory (file-name-as-directory dir))
  (execute-kbd-macro (kbd (or keys "M-x claude-bridge-chat RET")))
  (current-buffer))

(defun cbt-wait-idle (buffer)
  "Wait until the chat of BUFFER is idle (started, or its turn ended)."
  (cbt-wait "an idle chat" (lambda () (eq (cbt-state buffer) 'idle)))
  (cbt-flush buffer))

(defun cbt-wait-turn (buffer)
  "Wait for the end of the turn of chat BUFFER; return its result."
  (let ((chat (cbt-chat buffer)))
    (cbt-wait "the end of the turn"
              (lambda () (and (claude-bridge--chat-last-result chat)
                              (eq (claude-bridge--chat-state chat) 'idle))))
    (cbt-flush buffer)
    (claude-bridge--chat-last-result chat)))

(defun cbt-send (buffer prompt)
  "Type PROMPT in chat BUFFER's prompt and press C-c C-c."
  (setf (claude-bridge--chat-last-result (cbt-chat buffer)) nil)
  (cbt-keys buffer "C-c C-n")
  (cbt-type buffer prompt)
  (cbt-keys buffer "C-c C-c"))

(defun cbt-turn (buffer prompt)
  "Send PROMPT from chat BUFFER's prompt and wait until the turn ends; return its result."
  (cbt-send buffer prompt)
  (cbt-wait-turn buffer))

(defun cbt-kill (buffer)
  "Kill BUFFER without the questions a person would be asked."
  (when (buffer-live-p buffer)
    (let ((kill-buffer-query-functions nil)) (kill-buffer buffer))))

(defmacro cbt-with-chat (spec &rest body)
  "Run BODY with (BUFFER DIR) of SPEC bound to a started chat of a new project.
The chat is opened with M-x claude-bridge-chat from the project."
  (declare (indent 1))
  `(let* ((,(cadr spec) (progn (delete-other-windows) (cbt-project)))
          (,(car spec) (cbt-open-chat ,(cadr spec))))
     (unwind-protect
         (progn (cbt-wait-idle ,(car spec)) ,@body)
       (cbt-kill ,(car spec)))))

(defun cbt-api (method path &optional body)
  "Call the fake API with METHOD on PATH, sending BODY (a JSON string)."
  (let* ((url-request-method method)
         (url-request-extra-headers '(("Content-Type" . "application/json")))
         (url-request-data (and body (encode-coding-string body 'utf-8)))
         (buffer (url-retrieve-synchronously
                  (concat (getenv "CLAUDE_BRIDGE_TEST_API") path) t nil 10)))
    (unwind-protect
        (with-current-buffer buffer
          (goto-char url-http-end-of-headers)
          (json-parse-buffer :object-type 'plist :null-object nil :false-object nil))
      (kill-buffer buffer))))

(defun cbt-enqueue (&rest scripts)
  "Queue SCRIPTS (plists in the fake API's JSON form) for the next model calls."
  (cbt-api "POST" "/_fake/enqueue" (json-serialize (vconcat scripts))))

(defun cbt-last-request ()
  "Return the body of the last main /v1/messages request the fake API got."
  (let ((requests (cbt-api "GET" "/_fake/requests")))
    (aref requests (1- (length requests)))))

(defun cbt-last-user-content (request)
  "Return the content blocks (a list) of the last user message of REQUEST."
  (let* ((messages (append (plist-get request :messages) nil))
         (user (car (last (cl-remove-if-not (lambda (m) (equal (plist-get m :role) "user"))
                                            messages))))
         (content (plist-get user :content)))
    (if (stringp content) (list (list :type "text" :text content)) (append content nil))))

(defun cbt-items (buffer kind)
  "Return the items of KIND in chat BUFFER's chat, oldest first."
  (cl-remove-if-not (lambda (i) (eq (claude-bridge-item-kind i) kind))
                    (claude-bridge-model-items (cbt-chat buffer))))

(defun cbt-item-region (buffer item)
  "Return the text chat BUFFER shows for ITEM."
  (with-current-buffer buffer
    (buffer-substring-no-properties (claude-bridge-item-start item)
                                    (claude-bridge-item-end item))))

(defun cbt-buffer-text (buffer)
  "Return the whole text of BUFFER."
  (with-current-buffer buffer (buffer-substring-no-properties (point-min) (point-max))))

(defun cbt-prompt-text (buffer)
  "Return the text of chat BUFFER's prompt, as it is."
  (with-current-buffer buffer
    (buffer-substring-no-properties claude-bridge-view--prompt-marker (point-max))))

(defun cbt-alive-p (pid)
  "Return non-nil while PID runs (a zombie is not running)."
  (let ((attrs (process-attributes pid)))
    (and attrs (not (equal (alist-get 'state attrs) "Z")))))

(defun cbt-wait-card (buffer)
  "Wait until a permission prompt waits in chat BUFFER; return its item, drawn."
  (let ((item (cbt-wait "a permission prompt"
                        (lambda () (car (claude-bridge--chat-permissions (cbt-chat buffer)))))))
    (cbt-flush buffer)
    item))

(defun cbt-messages-during (fn)
  "Call FN; return the messages shown meanwhile, oldest first."
  (let ((messages nil))
    (cl-letf* ((real (symbol-function 'message))
               ((symbol-function 'message)
                (lambda (fmt &rest args)
                  (when fmt (push (apply #'format-message fmt args) messages))
                  (apply real fmt args))))
      (funcall fn))
    (nreverse messages)))

(defun cbt-slow-text (words)
  "A fake API script streaming WORDS words, 50 ms apart."
  (list :text (mapconcat (lambda (i) (format "w%d " i)) (number-sequence 0 (1- words)) "")
        :delay 0.05))

(defun cbt-file-text (file)
  "Return the contents of FILE."
  (with-temp-buffer (insert-file-contents file) (buffer-string)))

;;;; The model, without drawing

(ert-deftest claude-bridge-test-model-accumulates-deltas-and-tool-cards ()
  (let ((c (claude-bridge-model-make-chat "/tmp/")))
    (dolist (chunk '("Hel" "lo " "world"))
      (claude-bridge-model-apply c (list :type "textDelta" :text chunk :index 0)))
    (claude-bridge-model-apply c '(:type "assistantText" :text "Hello world"))
    (claude-bridge-model-apply c '(:type "toolUse" :toolUseId "t1" :name "Bash"
                                         :input (:command "ls -la\nmore")))
    (claude-bridge-model-apply c '(:type "toolResult" :toolUseId "t1" :content "a b"
                                         :isError :json-false))
    (let ((items (claude-bridge-model-items c)))
      (should (equal (mapcar #'claude-bridge-item-kind items) '(text tool)))
      (should (equal (claude-bridge-model-item-text (car items)) "Hello world"))
      (should (equal (claude-bridge-item-text (cadr items)) "Bash: ls -la"))
      (should (equal (claude-bridge-model-get (cadr items) :result) "a b"))
      (should-not (claude-bridge-model-get (cadr items) :error)))
    (should (= (claude-bridge--chat-deltas c) 3))))

(ert-deftest claude-bridge-test-model-final-block-corrects-deltas ()
  (let ((c (claude-bridge-model-make-chat "/tmp/")))
    (claude-bridge-model-apply c '(:type "textDelta" :text "partial"))
    (claude-bridge-model-apply c '(:type "assistantText" :text "partial, cut" :aborted t))
    (should (equal (claude-bridge-model-assistant-text c) "partial, cut"))))

(ert-deftest claude-bridge-test-model-keeps-drawn-chunks-without-copying ()
  (let ((c (claude-bridge-model-make-chat "/tmp/")))
    (dolist (chunk '("ab" "cd"))
      (claude-bridge-model-apply c (list :type "textDelta" :text chunk)))
    (let ((item (car (claude-bridge-model-items c))))
      (should (equal (claude-bridge-model-mark-seen item) '("cd" "ab")))
      (claude-bridge-model-apply c '(:type "textDelta" :text "é!"))
      (claude-bridge-model-apply c '(:type "assistantText" :text "abcdé!"))
      (should-not (claude-bridge-model-get item :redraw))
      (should (equal (claude-bridge-model-item-text item) "abcdé!")))))

(ert-deftest claude-bridge-test-model-cli-echoes-are-never-user-prompts ()
  (let ((c (claude-bridge-model-make-chat "/tmp/")))
    ;; Live: the echo of a model switch, and the mark of an interrupt.
    (claude-bridge-model-apply
     c '(:type "userText" :isReplay t
               :text "<local-command-stdout>Set model to `haiku`</local-command-stdout>"))
    (claude-bridge-model-apply c '(:type "userText" :text "[Request interrupted by user]"))
    ;; Replayed history: a slash command, its output, an interrupt, a real prompt.
    (dolist (text '("<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args>haiku</command-args>"
                    "<local-command-stdout>Set model to `haiku`</local-command-stdout>"
                    "[Request interrupted by user]"
                    "what is 2+2?"))
      (claude-bridge-model-apply c (list :type "userText" :text text :isReplay :json-false) t))
    (let ((items (claude-bridge-model-items c)))
      (should (equal (mapcar #'claude-bridge-item-kind items) '(notice notice notice user)))
      (should (equal (mapcar #'claude-bridge-item-text items)
                     '("/model haiku" "Set model to `haiku`" "Interrupted." "what is 2+2?")))
      (should (equal (claude-bridge--chat-history c) '("what is 2+2?"))))))

(ert-deftest claude-bridge-test-model-sends-mentions-and-images-as-content-blocks ()
  (let* ((dir (cbt-project))
         (c (claude-bridge-model-make-chat dir)))
    (with-temp-file (expand-file-name "notes.txt" dir) (insert "the notes\n"))
    (make-directory (expand-file-name "src" dir))
    (should (equal (claude-bridge-model-prompt "plain" nil dir) "plain"))
    (let ((blocks (append (claude-bridge-model-prompt
                           "read @notes.txt and @src/ but not @nothing"
                           (list (list :kind 'image :label "a.png" :media-type "image/png"
                                       :data "iVBORw0KGgo="))
                           dir)
                          nil)))
      (should (equal (mapcar (lambda (b) (plist-get b :type)) blocks)
                     '("text" "image" "text" "text")))
      (should (equal (plist-get (car blocks) :text)
                     "read @notes.txt and @src/ but not @nothing"))
      (should (equal (plist-get (plist-get (nth 1 blocks) :source) :data) "iVBORw0KGgo="))
      (should (equal (plist-get (nth 2 blocks) :text)
                     "[Attached file notes.txt]\n```\nthe notes\n```"))
      (should (string-match-p "\\`\\[Attached folder src/\\]\n" (plist-get (nth 3 blocks) :text)))
      ;; In a transcript, they are known for what they are.
      (should (equal (mapcar (lambda (b) (claude-bridge-model-attachment-label
                                          (or (plist-get b :text) "")))
                             blocks)
                     '(nil nil "notes.txt" "src/"))))
    (ignore c)))

;;;; Drawing, without a bridge

(ert-deftest claude-bridge-test-thinking-and-tool-calls-fold-with-tab ()
  (let* ((c (claude-bridge-model-make-chat (cbt-project)))
         (buf (claude-bridge-view-make-buffer c "*claude test*")))
    (unwind-protect
        (progn
          (claude-bridge-model-apply c '(:type "thinkingDelta" :thinking "Let me see."))
          (claude-bridge-model-apply c '(:type "thinking" :thinking "Let me see. Yes."))
          (claude-bridge-model-apply c '(:type "toolUse" :toolUseId "t1" :name "Bash"
                                               :input (:command "ls")))
          (claude-bridge-model-apply c '(:type "toolResult" :toolUseId "t1"
                                               :content "a.txt\nb.txt"))
          (cbt-flush buf)
          (let ((text (cbt-buffer-text buf)))
            (should (string-match-p "▸ Thinking\n▸ Bash: ls ✓\n" text))
            (should-not (string-match-p "Let me see\\|b\\.txt" text)))
          (with-current-buffer buf (goto-char (point-min)) (search-forward "Thinking"))
          (cbt-keys buf "TAB")
          (with-current-buffer buf (search-forward "Bash: ls"))
          (cbt-keys buf "TAB")
          (let ((text (cbt-buffer-text buf)))
            (should (string-match-p "▾ Thinking\nLet me see\\. Yes\\." text))
            (should (string-match-p "▾ Bash: ls ✓\n  input: {\"command\":\"ls\"}\n  result:\n    a.txt\n    b.txt"
                                    text)))
          ;; The conversation is read-only: what is typed there goes to the prompt.
          (with-current-buffer buf (goto-char (point-min)))
          (cbt-type buf "my ")
          (should (with-current-buffer buf (claude-bridge-view-in-prompt-p)))
          (cbt-type buf "prompt")
          (should (equal (cbt-prompt-text buf) "my prompt"))
          (should (string-match-p "\\`▾ Thinking\n" (cbt-buffer-text buf))))
      (cbt-kill buf))))

(ert-deftest claude-bridge-test-tab-off-a-section-is-the-major-modes-tab ()
  (let* ((c (claude-bridge-model-make-chat (cbt-project)))
         (buf (claude-bridge-view-make-buffer c "*claude test*")))
    (unwind-protect
        (with-current-buffer buf
          (should (eq major-mode 'text-mode)) ; no markdown-mode on this load path
          (should-not (fboundp 'claude-bridge--parent-mode))
          (cbt-keys buf "C-c C-n")
          (should (eq (key-binding (kbd "TAB")) 'indent-for-tab-command))
          (cbt-type buf "  indented")
          (cbt-keys buf "RET TAB")
          ;; TAB does what it does in any text-mode buffer.
          (should (equal (cbt-prompt-text buf)
                         (with-temp-buffer
                           (text-mode)
                           (switch-to-buffer (current-buffer))
                           (execute-kbd-macro (kbd "SPC SPC i n d e n t e d RET TAB"))
                           (buffer-string)))))
      (cbt-kill buf))))

(ert-deftest claude-bridge-test-faces-are-named-without-a-face-suffix ()
  (let ((faces (cl-remove-if-not (lambda (s) (and (facep s)
                                                  (string-prefix-p "claude-bridge"
                                                                   (symbol-name s))))
                                 (face-list))))
    (should (memq 'claude-bridge-user faces))
    (should-not (cl-some (lambda (f) (string-suffix-p "-face" (symbol-name f))) faces))))

(ert-deftest claude-bridge-test-doctor-reports-a-working-setup ()
  (let* ((buf (progn (execute-kbd-macro (kbd "M-x claude-bridge-doctor RET"))
                     (get-buffer "*claude-bridge doctor*")))
         (proc (get-buffer-process buf)))
    (cbt-wait "the doctor's report" (lambda () (not (process-live-p proc))))
    (should (= (process-exit-status proc) 0))
    (should (string-match-p "2\\.1\\.[0-9]+" (cbt-buffer-text buf)))))

;;;; Streaming

(ert-deftest claude-bridge-test-turn-streams-exact-text ()
  (cbt-with-chat (buf dir)
    (ignore dir)
    (let ((text "Hello, Emacs!\nLine two — ünïcödé ✓\n```\n(code)\n```\nend"))
      (cbt-enqueue (list :text text :chunkSize 3 :delay 0.02))
      (should (equal (plist-get (cbt-turn buf "stream please") :text) text))
      (let ((chat (cbt-chat buf))
            (item (car (last (cbt-items buf 'text)))))
        (should (> (claude-bridge--chat-deltas chat) 1))
        (should (equal (claude-bridge-model-assistant-text chat) text))
        (should (equal (cbt-item-region buf item) text))
        (should (string-match-p "❯ stream please" (cbt-buffer-text buf)))
        (should (string-match-p "── .* this turn · \\$" (cbt-buffer-text buf)))
        (should (equal (cbt-prompt-text buf) ""))))))

(ert-deftest claude-bridge-test-undo-in-the-prompt-survives-a-streaming-reply ()
  (cbt-with-chat (buf dir)
    (ignore dir)
    (let ((chat (cbt-chat buf)))
      (cbt-enqueue (cbt-slow-text 30))
      (cbt-send buf "talk slowly")
      (cbt-type buf "hello")
      (cbt-keys buf "C-a C-e")          ; not one more self-insert: a new undo group
      (let ((deltas (claude-bridge--chat-deltas chat)))
        (cbt-wait "more of the reply" (lambda () (> (claude-bridge--chat-deltas chat)
                                                    (+ deltas 5)))))
      (cbt-flush buf)
      (cbt-type buf " world")
      (cbt-wait-turn buf)
      ;; The reply grew above the prompt meanwhile; undo still undoes the prompt's edit.
      (cbt-keys buf "C-/")
      (should (equal (cbt-prompt-text buf) "hello"))
      (should (equal (cbt-item-region buf (car (last (cbt-items buf 'text))))
                     (plist-get (cbt-slow-text 30) :text))))))

(ert-deftest claude-bridge-test-m-p-and-m-n-walk-the-prompt-history ()
  (cbt-with-chat (buf dir)
    (ignore dir)
    (cbt-turn buf "first prompt")
    (cbt-turn buf "second prompt")
    (cbt-type buf "a draft")
    (cbt-keys buf "M-p")
    (should (equal (cbt-prompt-text buf) "second prompt"))
    (cbt-keys buf "M-p")
    (should (equal (cbt-prompt-text buf) "first prompt"))
    (cbt-keys buf "M-n M-n")
    (should (equal (cbt-prompt-text buf) "a draft"))
    (cbt-keys buf "M-p C-c C-c")
    (should (equal (plist-get (cbt-wait-turn buf) :text) "Echo: second prompt"))))

(ert-deftest claude-bridge-test-gc-threshold-is-raised-while-a-turn-streams-then-restored ()
  (cbt-with-chat (buf dir)
    (ignore dir)
    (let ((gc-cons-threshold 800000)
          (claude-bridge-streaming-gc-cons-threshold (* 32 1024 1024))
          (chat (cbt-chat buf))
          seen)
      (cbt-enqueue (cbt-slow-text 20))
      (cbt-send buf "talk slowly")
      (cbt-wait "some streamed words" (lambda () (> (claude-bridge--chat-deltas chat) 2)))
      (setq seen gc-cons-threshold)
      (cbt-wait-turn buf)
      (should (= seen (* 32 1024 1024)))
      (should (= gc-cons-threshold 800000)))))

(ert-deftest claude-bridge-test-gc-threshold-left-alone-when-the-option-is-nil ()
  (cbt-with-chat (buf dir)
    (ignore dir)
    (let ((gc-cons-threshold 800000)
          (claude-bridge-streaming-gc-cons-threshold nil)
          (chat (cbt-chat buf))
          seen)
      (cbt-enqueue (cbt-slow-text 10))
      (cbt-send buf "talk slowly")
      (cbt-wait "some streamed words" (lambda () (> (claude-bridge--chat-deltas chat) 2)))
      (setq seen gc-cons-threshold)
      (cbt-wait-turn buf)
      (should (= seen 800000)))))

(ert-deftest claude-bridge-test-prompt-sent-while-starting-goes-once-it-is-up ()
  (let* ((dir (cbt-project))
         (buf (cbt-open-chat dir)))
    (unwind-protect
        (progn
          (should (eq (cbt-state buf) 'starting))
          (cbt-send buf "early bird")
          (should (equal (plist-get (cbt-wait-turn buf) :text) "Echo: early bird"))
          (should (= (length (cbt-items buf 'user)) 1))
          (should-not (string-match-p "waiting for Claude" (cbt-buffer-text buf))))
      (cbt-kill buf))))

;;;; Permission prompts

(ert-deftest claude-bridge-test-permission-card-answered-with-its-key-runs-the-tool ()
  (cbt-with-chat (buf dir)
    (cbt-send buf "please USE_BASH")
    (cbt-wait-card buf)
    (should (string-match-p "^? Claude wants Bash: touch .*\n  say hello\n\\(  .*\n\\)*  \\[a\\] Allow  \\[d\\] Deny"
                            (cbt-buffer-text buf)))
    (cbt-keys buf "C-c C-p a")
    (cbt-wait-turn buf)
    (should (file-exists-p (expand-file-name "made-by-bash" dir)))
    (should (equal (claude-bridge-model-get (car (cbt-items buf 'tool)) :result)
                   "hello-from-bash"))
    (should (string-match-p "✓ Claude wants Bash: .* — allowed" (cbt-buffer-text buf)))))

(ert-deftest claude-bridge-test-keys-typed-in-the-prompt-never-answer-a-permission-prompt ()
  (cbt-with-chat (buf dir)
    (let ((chat (cbt-chat buf)))
      (cbt-send buf "please USE_BASH")
      ;; The user keeps typing in the prompt as the card arrives above it.
      (cbt-type buf "a")
      (cbt-wait-card buf)
      (cbt-type buf "adA123 yes")
      (cbt-keys buf "RET")
      (cbt-type buf "a")
      (accept-process-output nil 0.5)
      (should (equal (cbt-prompt-text buf) "aadA123 yes\na"))
      (should (claude-bridge--chat-permissions chat))
      (should (eq (claude-bridge--chat-state chat) 'running))
      (should-not (file-exists-p (expand-file-name "made-by-bash" dir)))
      ;; Going to the card, a key there answers it.
      (cbt-keys buf "C-c C-p d RET")
      (cbt-wait-turn buf)
      (should-not (file-exists-p (expand-file-name "made-by-bash" dir)))
      (should (equal (cbt-prompt-text buf) "aadA123 yes\na")))))

(ert-deftest claude-bridge-test-a-card-drawn-where-point-is-pushes-point-past-it ()
  (cbt-with-chat (buf dir)
    (let ((chat (cbt-chat buf)))
      ;; Point where the next item is drawn: at the start of the line below the chat.
      (with-current-buffer buf (goto-char claude-bridge-view--insert-marker))
      (cbt-send buf "please USE_BASH")
      (with-current-buffer buf (goto-char claude-bridge-view--insert-marker))
      (cbt-wait-card buf)
      (with-current-buffer buf
        (should-not (claude-bridge-permission-card-at-point)))
      (cbt-type buf "a")
      (should (equal (cbt-prompt-text buf) "a"))
      (should (claude-bridge--chat-permissions chat))
      (should-not (file-exists-p (expand-file-name "made-by-bash" dir)))
      (cbt-keys buf "C-c C-k")
      (cbt-wait-turn buf))))

(ert-deftest claude-bridge-test-deny-tells-claude-the-reason-typed ()
  (cbt-with-chat (buf dir)
    (cbt-send buf "please USE_BASH")
    (cbt-wait-card buf)
    (cbt-keys buf (concat "C-c C-p d " (cbt-k "not on my machine") " RET"))
    (cbt-wait-turn buf)
    (should-not (file-exists-p (expand-file-name "made-by-bash" dir)))
    (let ((tool (car (cbt-items buf 'tool))))
      (should (claude-bridge-model-get tool :error))
      (should (string-match-p "not on my machine" (claude-bridge-model-get tool :result))))
    (should (string-match-p "✗ Claude wants Bash: .* — denied: not on my machine"
                            (cbt-buffer-text buf)))))

(ert-deftest claude-bridge-test-a-suggested-rule-is-its-own-choice-and-says-what-it-adds ()
  (cbt-with-chat (buf dir)
    (cbt-send buf "please USE_BASH")
    (cbt-wait-card buf)
    (let ((text (cbt-buffer-text buf)))
      (should (string-match "\\[\\([1-9]\\)\\] Always allow \\(Bash([^\n]*)\\) for this project, just you"
                            text))
      (let ((key (match-string 1 text))
            (rule (match-string 2 text)))
        (should-not (string-match-p "\\[[1-9]\\] Always\n" text))
        (cbt-keys buf (concat "C-c C-p " key))
        (cbt-wait-turn buf)
        (should (string-match-p (regexp-quote (format "allowed; rule %s allows" rule))
                                (cbt-buffer-text buf)))
        (should (string-match-p (regexp-quote (substring rule 5 -1))
                                (cbt-file-text (expand-file-name ".claude/settings.local.json"
                                                                 dir))))))
    (should (file-exists-p (expand-file-name "made-by-bash" dir)))))

(ert-deftest claude-bridge-test-an-edit-is-viewed-in-ediff-and-leaving-it-restores-the-frame ()
  (cbt-with-chat (buf dir)
    (let ((file (expand-file-name "notes.txt" dir))
          (windows nil))
      (with-temp-file file (insert "hello world\n"))
      (cbt-send buf "please USE_EDIT")
      (let ((item (cbt-wait-card buf)))
        (should (string-match-p "Claude wants Edit: .*notes.txt\n  \\+1 -1 lines\n  .*\\[v\\] View the change"
                                (cbt-buffer-text buf)))
        (cbt-keys buf "C-c C-p")
        (setq windows (mapcar #'window-buffer (window-list)))
        (cbt-keys buf "v")
        (let ((now (claude-bridge-model-get item :now))
              (proposal (claude-bridge-model-get item :proposal)))
          (should (equal (buffer-name now) "*claude now: notes.txt*"))
          (should (eq (buffer-local-value 'major-mode now) 'text-mode))
          (should (eq (buffer-local-value 'major-mode proposal) 'text-mode))
          (should (equal (with-current-buffer proposal (buffer-string)) "goodbye world\n"))
          (should (get-buffer-window proposal))
          ;; q in ediff's control window, then y: the frame is as it was, point on the card.
          (execute-kbd-macro (kbd "q y"))
          (should (equal (mapcar #'window-buffer (window-list)) windows))
          (should (eq (current-buffer) buf))
          (should (with-current-buffer buf (claude-bridge-permission-card-at-point)))
          (cbt-keys buf "a")
          (should-not (buffer-live-p now))
          (should-not (buffer-live-p proposal))))
      (cbt-wait-turn buf)
      (should (equal (cbt-file-text file) "goodbye world\n")))))

(ert-deftest claude-bridge-test-an-edit-is-allowed-with-the-users-changes-to-the-proposal ()
  (cbt-with-chat (buf dir)
    (let ((file (expand-file-name "notes.txt" dir)))
      (with-temp-file file (insert "hello world\n"))
      (cbt-send buf "please USE_EDIT")
      (let ((item (cbt-wait-card buf)))
        (cbt-keys buf "C-c C-p v")
        (let ((proposal (claude-bridge-model-get item :proposal)))
          (execute-kbd-macro (kbd "q y"))
          ;; Edit the proposal in its own buffer, then allow from there.
          (switch-to-buffer proposal)
          (goto-char (point-max))
          (execute-kbd-macro "and farewell\n")
          (cbt-flush buf)
          (should (string-match-p "\\[e\\] Allow with your edits" (cbt-buffer-text buf)))
          (cbt-keys proposal "C-c C-c")))
      (cbt-wait-turn buf)
      (should (equal (cbt-file-text file) "goodbye world\nand farewell\n"))
      (should (string-match-p "— allowed with your edits" (cbt-buffer-text buf))))))

(ert-deftest claude-bridge-test-ask-user-question-shows-the-options-and-takes-any-answer ()
  (cbt-with-chat (buf dir)
    (ignore dir)
    (cbt-send buf "ASKQ")
    (cbt-wait-card buf)
    (should (string-match-p "? Claude asks\n  Colour: Which colour\\?\n    - Red — warm\n    - Blue — cool\n  \\[a\\] Answer  \\[d\\] Decline"
                            (cbt-buffer-text buf)))
    (cbt-keys buf "C-c C-p a B l u e RET")
    (cbt-wait-turn buf)
    (should (string-match-p "Blue" (claude-bridge-model-get (car (cbt-items buf 'tool)) :result)))
    (should (string-match-p "— answered: Which colour\\? → Blue" (cbt-buffer-text buf)))))

(ert-deftest claude-bridge-test-plan-card-shows-the-plan-and-approves-it ()
  (cbt-with-chat (buf dir)
    (ignore dir)
    (cbt-keys buf "C-c C-o plan RET")
    (cbt-wait "plan mode" (lambda () (equal (claude-bridge--chat-permission-mode (cbt-chat buf))
                                            "plan")))
    (cbt-enqueue '(:toolUse (:name "ExitPlanMode" :input (:plan "# The plan\n\n1. read it")))
                 '(:text "planned"))
    (cbt-send buf "make a plan")
    (cbt-wait-card buf)
    (should (string-match-p "? Claude's plan is ready\n  # The plan\n  \n  1\\. read it\n  \\[a\\] Approve  \\[d\\] Keep planning"
                            (cbt-buffer-text buf)))
    (cbt-keys buf "C-c C-p a")
    (should (equal (plist-get (cbt-wait-turn buf) :text) "planned"))))

(ert-deftest claude-bridge-test-interrupting-withdraws-a-prompt-left-open ()
  (cbt-with-chat (buf dir)
    (cbt-send buf "please USE_BASH")
    (let ((item (cbt-wait-card buf)))
      (cbt-keys buf "C-c C-k")
      (cbt-wait-turn buf)
      (should (string-match-p "⊘ Claude wants Bash: .* — withdrawn: the turn ended"
                              (cbt-buffer-text buf)))
      (should-not (string-match-p "\\[a\\] Allow" (cbt-buffer-text buf)))
      (should (equal (cadr (should-error (cbt-keys buf "C-c C-p") :type 'user-error))
                     "No permission prompt waits"))
      (with-current-buffer buf (goto-char (claude-bridge-item-start item)))
      (cbt-type buf "a")                ; no answer: a goes to the prompt
      (should (equal (cbt-prompt-text buf) "a"))
      (should-not (file-exists-p (expand-file-name "made-by-bash" dir))))))

(ert-deftest claude-bridge-test-a-prompt-open-when-the-bridge-dies-is-withdrawn-and-cannot-be-answered ()
  (cbt-with-chat (buf dir)
    (let ((chat (cbt-chat buf))
          (bridge (claude-bridge-client-pid)))
      (cbt-send buf "please USE_BASH")
      (let ((item (cbt-wait-card buf)))
        (cbt-keys buf "C-c C-p")        ; point on the card, as a user about to answer
        (signal-process bridge 'kill)
        (cbt-wait "the bridge's end" (lambda () (eq (claude-bridge--chat-state chat) 'exited)))
        (cbt-flush buf)
        (should (string-match-p "⊘ Claude wants Bash: .* — withdrawn: claude-bridge exited"
                                (cbt-buffer-text buf)))
        (with-current-buffer buf (goto-char (claude-bridge-item-start item)))
        (cbt-type buf "a")              ; no answer: a goes to the prompt
        (should (equal (cbt-prompt-text buf) "a"))
        (should-not (claude-bridge-client-live-p)) ; no new bridge was started
        (should-not (string-match-p "allowed" (cbt-buffer-text buf)))
        (should-not (file-exists-p (expand-file-name "made-by-bash" dir)))))))

(ert-deftest claude-bridge-test-a-prompt-unanswered-in-time-is-denied-and-closes-its-diff ()
  (let ((claude-bridge-permission-timeout 1))
    (cbt-with-chat (buf dir)
      (with-temp-file (expand-file-name "notes.txt" dir) (insert "hello world\n"))
      (cbt-send buf "please USE_EDIT")
      (let ((item (cbt-wait-card buf)))
        (cbt-keys buf "C-c C-p v")
        (execute-kbd-macro (kbd "q y"))
        (should (buffer-live-p (claude-bridge-model-get item :proposal)))
        (let ((proposal (claude-bridge-model-get item :proposal)))
          (cbt-wait-turn buf)
          (should-not (buffer-live-p proposal)))
        (should (string-match-p "✗ Claude wants Edit: .* — denied: no answer within 1 s"
                                (cbt-buffer-text buf)))
        (should (string-match-p "Denied: no answer within 1 s\\."
                                (claude-bridge-model-get (car (last (cbt-items buf 'tool)))
                                                         :result)))
        (should (equal (cbt-file-text (expand-file-name "notes.txt" dir)) "hello world\n"))))))

(ert-deftest claude-bridge-test-permission-function-answers-without-asking ()
  (cbt-with-chat (buf dir)
    (let ((claude-bridge-permission-functions
           (list (lambda (_chat request)
                   (when (equal (plist-get request :toolName) "Bash")
                     '(:behavior "allow"))))))
      (cbt-turn buf "please USE_BASH"))
    (should-not (cbt-items buf 'permission))
    (should (file-exists-p (expand-file-name "made-by-bash" dir)))))

;;;; Running turns

(ert-deftest claude-bridge-test-interrupt-keeps-the-same-process ()
  (cbt-with-chat (buf dir)
    (ignore dir)
    (let* ((chat (cbt-chat buf))
           (pid (claude-bridge--chat-pid chat)))
      (cbt-enqueue (cbt-slow-text 200))
      (cbt-send buf "talk slowly")
      (cbt-wait "some streamed words" (lambda () (> (claude-bridge--chat-deltas chat) 3)))
      (cbt-keys buf "C-c C-k")
      (should (eq (plist-get (cbt-wait-turn buf) :interrupted) t))
      (should (string-match-p "── interrupted" (cbt-buffer-text buf)))
      (should-not (string-match-p "Request interrupted" (cbt-buffer-text buf)))
      (should (equal (plist-get (cbt-turn buf "still there?") :text) "Echo: still there?"))
      (should (equal (claude-bridge--chat-pid chat) pid))
      (should (cbt-alive-p pid)))))

(ert-deftest claude-bridge-test-live-message-during-a-slow-turn-gets-its-answer ()
  (cbt-with-chat (buf dir)
    (ignore dir)
    (let ((chat (cbt-chat buf))
          (slow (cbt-slow-text 30)))
      (cbt-enqueue slow)
      (cbt-send buf "talk slowly")
      (cbt-wait "some streamed words" (lambda () (> (claude-bridge--chat-deltas chat) 2)))
      (should (eq (claude-bridge--chat-state chat) 'running))
      (cbt-type buf "and one more thing")
      (cbt-keys buf "C-c C-c")
      (should (= (plist-get (cbt-wait-turn buf) :results) 2))
      (should (string-match-p "Echo: and one more thing" (cbt-buffer-text buf)))
      ;; The reply went on in place while the message waited below it: once, whole.
      (should (equal (cbt-item-region buf (car (cbt-items buf 'text))) (plist-get slow :text)))
      (with-current-buffer buf
        (should (= (how-many "\\bw0 " (point-min) (point-max)) 1))))))

(ert-deftest claude-bridge-test-model-and-mode-switches-show-plainly-and-in-the-mode-line ()
  (cbt-with-chat (buf dir)
    (let ((chat (cbt-chat buf)))
      (cbt-keys buf "C-c C-m claude-haiku-4-5 RET")
      (cbt-wait "the model switch"
                (lambda () (equal (claude-bridge--chat-model chat) "claude-haiku-4-5")))
      (cbt-turn buf "which model?")
      (should (equal (plist-get (cbt-last-request) :model) "claude-haiku-4-5"))
      (cbt-keys buf "C-c C-o acceptEdits RET")
      (cbt-wait "the mode switch"
                (lambda () (equal (claude-bridge--chat-permission-mode chat) "acceptEdits")))
      (cbt-turn buf "please USE_WRITE")
      (should-not (cbt-items buf 'permission))
      (should (file-exists-p (expand-file-name "written.txt" dir)))
      (let ((text (cbt-buffer-text buf)))
        ;; The CLI's echo of the switch is no prompt of the user.
        (should-not (string-match-p "local-command\\|❯ <" text))
        (should (string-match-p "· Model: claude-haiku-4-5" text)))
      (let ((notice (cl-find "Model: claude-haiku-4-5" (cbt-items buf 'notice)
                             :key #'claude-bridge-item-text :test #'equal)))
        (should (eq (get-text-property (claude-bridge-item-start notice) 'face buf)
                    'claude-bridge-info)))
      (should (string-match-p "\\[claude-haiku-4-5|acceptEdits|idle|\\$"
                              (with-current-buffer buf (claude-bridge-view-mode-line)))))))

(ert-deftest claude-bridge-test-send-region-shows-the-chat-and-says-what-was-sent ()
  (cbt-with-chat (buf dir)
    (let ((file (expand-file-name "code.py" dir))
          messages)
      (with-temp-file file (insert "a = 1\nb = 2\nc = 3\n"))
      (let ((code (find-file-noselect file)))
        (unwind-protect
            (progn
              (switch-to-buffer code)
              (delete-other-windows)
              (goto-char (point-min))
              (forward-line 1)
              (setq messages
                    (cbt-messages-during
                     (lambda ()
                       (execute-kbd-macro
                        (kbd "C-SPC M-> M-x claude-bridge-send-region RET what SPC is SPC b? RET")))))
              (should (get-buffer-window buf))
              (should (eq (window-buffer) code))
              (should (member "Sent code.py:2-3 to Claude" (mapcar (lambda (m) (substring m 0 (min 26 (length m)))) messages)))
              (cbt-wait-turn buf))
          (kill-buffer code)))
      (let ((content (cbt-last-user-content (cbt-last-request))))
        (should (cl-some (lambda (b) (string-match-p "\\[Attached code.py:2-3\\]\n```python\nb = 2\nc = 3\n```"
                                                     (or (plist-get b :text) "")))
                         content))
        (should (member "what is b?" (mapcar (lambda (b) (plist-get b :text)) content)))))))

(ert-deftest claude-bridge-test-context-added-shows-as-a-chip-goes-with-the-next-prompt-and-is-removable ()
  (cbt-with-chat (buf dir)
    (let ((a (expand-file-name "a.txt" dir))
          (b (expand-file-name "b.txt" dir)))
      (with-temp-file a (insert "alpha\n"))
      (with-temp-file b (insert "beta\n"))
      (dolist (file (list a b))
        (let ((visiting (find-file-noselect file)))
          (switch-to-buffer visiting)
          (execute-kbd-macro (kbd "M-x claude-bridge-add RET"))
          (kill-buffer visiting)))
      (cbt-flush buf)
      (should (string-match-p "^Context: \\[a.txt ×\\] \\[b.txt ×\\]$" (cbt-buffer-text buf)))
      ;; RET on a chip takes it away.
      (with-current-buffer buf (goto-char (point-min)) (search-forward "[a.txt"))
      (cbt-keys buf "RET")
      (cbt-flush buf)
      (should (string-match-p "^Context: \\[b.txt ×\\]$" (cbt-buffer-text buf)))
      (cbt-turn buf "what do the files say?")
      (let ((texts (mapcar (lambda (b) (plist-get b :text))
                           (cbt-last-user-content (cbt-last-request)))))
        (should (member "[Attached file b.txt]\n```\nbeta\n```" texts))
        (should-not (cl-some (lambda (s) (string-match-p "alpha" (or s ""))) texts)))
      (should-not (string-match-p "^Context:" (cbt-buffer-text buf)))
      (should (string-match-p "❯ what do the files say\\?\n  \\+ b.txt" (cbt-buffer-text buf))))))

(ert-deftest claude-bridge-test-at-completes-project-files-in-the-prompt-and-sends-them ()
  (cbt-with-chat (buf dir)
    (with-temp-file (expand-file-name "notes.txt" dir) (insert "the notes\n"))
    (cbt-keys buf "C-c C-n")
    (cbt-type buf "summarize @no")
    (cbt-keys buf "TAB")
    (should (equal (cbt-prompt-text buf) "summarize @notes.txt"))
    (cbt-keys buf "C-c C-c")
    (cbt-wait-turn buf)
    (should (member "[Attached file notes.txt]\n```\nthe notes\n```"
                    (mapcar (lambda (b) (plist-get b :text))
                            (cbt-last-user-content (cbt-last-request)))))))

(ert-deftest claude-bridge-test-slash-completes-the-clis-commands-at-the-start-of-the-prompt ()
  (cbt-with-chat (buf dir)
    (ignore dir)
    (let* ((names (mapcar (lambda (c) (plist-get c :name))
                          (claude-bridge--chat-commands (cbt-chat buf))))
           ;; A command no other one starts with, typed but for its last letter.
           (name (cl-find-if (lambda (n)
                               (and (> (length n) 3)
                                    (= 1 (cl-count-if (lambda (m) (string-prefix-p
                                                                   (substring n 0 -1) m))
                                                      names))))
                             names)))
      (should name)
      (cbt-keys buf (concat "C-c C-n / " (cbt-k (substring name 0 -1)) " TAB"))
      (should (equal (cbt-prompt-text buf) (concat "/" name)))
      ;; Not in the middle of a prompt: there TAB is the major mode's.
      (cbt-keys buf (concat "C-a C-k " (cbt-k "see /") (cbt-k (substring name 0 -1)) " TAB"))
      (should-not (equal (cbt-prompt-text buf) (concat "see /" name))))))

(ert-deftest claude-bridge-test-an-attached-image-is-sent-as-an-image-block ()
  (cbt-with-chat (buf dir)
    (let ((png (expand-file-name "dot.png" dir))
          (bytes (base64-decode-string
                  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")))
      (let ((coding-system-for-write 'binary))
        (write-region bytes nil png))
      (cbt-keys buf (concat "C-c C-a " (cbt-k "dot.png") " RET"))
      (cbt-flush buf)
      (should (string-match-p "^Context: \\[dot.png ×\\]$" (cbt-buffer-text buf)))
      (cbt-turn buf "what is in the picture?")
      (let ((image (cl-find "image" (cbt-last-user-content (cbt-last-request))
                            :key (lambda (b) (plist-get b :type)) :test #'equal)))
        (should image)
        (should (equal (plist-get (plist-get image :source) :media_type) "image/png"))
        (should (equal (base64-decode-string (plist-get (plist-get image :source) :data))
                       bytes))))))

(ert-deftest claude-bridge-test-an-image-is-pasted-from-the-clipboard ()
  (cbt-with-chat (buf dir)
    (let* ((bytes (base64-decode-string
                   "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="))
           (png (expand-file-name "clip.png" dir))
           (claude-bridge-clipboard-image-command (list "cat" png)))
      (let ((coding-system-for-write 'binary)) (write-region bytes nil png))
      (cbt-keys buf "C-c C-i")
      (cbt-flush buf)
      (should (string-match-p "^Context: \\[pasted-[0-9]+\\.png ×\\]$" (cbt-buffer-text buf)))
      (cbt-turn buf "and this one?")
      (should (cl-find "image" (cbt-last-user-content (cbt-last-request))
                       :key (lambda (b) (plist-get b :type)) :test #'equal)))))

(ert-deftest claude-bridge-test-session-list-shows-open-sessions-and-g-refreshes-it ()
  (cbt-with-chat (buf dir)
    (ignore dir)
    (execute-kbd-macro (kbd "M-x claude-bridge-sessions RET"))
    (let ((list-buf (get-buffer "*claude-bridge sessions*")))
      (should (string-match-p (regexp-quote (buffer-name buf)) (cbt-buffer-text list-buf)))
      (switch-to-buffer buf)
      (cbt-keys buf "C-c C-q")
      (switch-to-buffer list-buf)
      (execute-kbd-macro (kbd "g"))
      (should-not (string-match-p (regexp-quote (buffer-name buf)) (cbt-buffer-text list-buf)))
      (switch-to-buffer buf)
      (cbt-turn buf "back again")
      (switch-to-buffer list-buf)
      (execute-kbd-macro (kbd "g"))
      (goto-char (point-min))
      (search-forward (buffer-name buf))
      (execute-kbd-macro (kbd "RET"))
      (should (eq (current-buffer) buf)))))

(ert-deftest claude-bridge-test-turn-done-hook-gets-the-result ()
  (cbt-with-chat (buf dir)
    (ignore dir)
    (let* ((seen nil)
           (claude-bridge-turn-done-hook
            (list (lambda (_chat result) (push (plist-get result :text) seen)))))
      (cbt-turn buf "hook me")
      (should (equal seen '("Echo: hook me"))))))

(ert-deftest claude-bridge-test-an-api-error-is-shown-once-and-the-chat-goes-on ()
  (cbt-with-chat (buf dir)
    (ignore dir)
    (should (eq (plist-get (cbt-turn buf "please API_ERROR") :isError) t))
    (with-current-buffer buf
      (should (= (how-many "fake API says the request is invalid" (point-min) (point-max)) 1)))
    (should (string-match-p "⚠ Error: API Error: 400" (cbt-buffer-text buf)))
    (should (equal (plist-get (cbt-turn buf "better now?") :text) "Echo: better now?"))))

(ert-deftest claude-bridge-test-an-api-retry-is-one-notice-with-its-attempt ()
  (cbt-with-chat (buf dir)
    (ignore dir)
    (cbt-enqueue '(:error (:status 529 :type "overloaded_error" :message "Overloaded"))
                 '(:text "after the retry"))
    (should (equal (plist-get (cbt-turn buf "retry me") :text) "after the retry"))
    (should (string-match-p "⚠ API overloaded: retrying, attempt 1 of 10, in [0-9.]+ s"
                            (cbt-buffer-text buf)))))

(ert-deftest claude-bridge-test-close-then-the-next-prompt-reopens ()
  (cbt-with-chat (buf dir)
    (ignore dir)
    (let ((pid (claude-bridge--chat-pid (cbt-chat buf))))
      (cbt-keys buf "C-c C-q")
      (should (eq (cbt-state buf) 'closed))
      (cbt-wait "the CLI's end" (lambda () (not (cbt-alive-p pid))))
      (cbt-flush buf)
      (should (string-match-p "· Session closed\\." (cbt-buffer-text buf)))
      (should (equal (plist-get (cbt-turn buf "again") :text) "Echo: again")))))

(ert-deftest claude-bridge-test-two-chats-in-one-frame-keep-their-own-drafts-and-turns ()
  (cbt-with-chat (one dir)
    (let ((two (cbt-open-chat dir "C-u M-x claude-bridge-chat RET")))
      (unwind-protect
          (progn
            (should-not (eq one two))
            (cbt-wait-idle two)
            (switch-to-buffer one)
            (split-window)
            (cbt-type one "draft of one")
            (cbt-turn two "hello from two")
            (should (equal (cbt-prompt-text one) "draft of one"))
            (should-not (string-match-p "hello from two" (cbt-buffer-text one)))
            ;; A window of a chat closed by hand: the chat goes on, no window reopens.
            (delete-window (get-buffer-window two))
            (cbt-enqueue (cbt-slow-text 5))
            (cbt-send two "talk slowly")
            (switch-to-buffer one)
            (cbt-wait-turn two)
            (should (equal (claude-bridge-model-assistant-text (cbt-chat two))
                           (plist-get (cbt-slow-text 5) :text))))
        (cbt-kill two)))))

(ert-deftest claude-bridge-test-a-chat-is-the-project-roots-whatever-the-folder ()
  (let* ((dir (cbt-project))
         (sub (expand-file-name "src/deep/" dir)))
    (make-directory sub t)
    (make-directory (expand-file-name ".git" dir))
    (let ((buf (cbt-open-chat sub)))
      (unwind-protect
          (progn
            (should (equal (claude-bridge--chat-cwd (cbt-chat buf)) dir))
            (should (eq (let ((default-directory dir)) (claude-bridge-chat)) buf)))
        (cbt-kill buf)))))

(ert-deftest claude-bridge-test-project-switch-project-opens-the-chat-of-the-project-picked ()
  (let* ((dir (cbt-project))
         (project-switch-commands '((claude-bridge-chat "Claude" ?a)))
         (project-list-file (expand-file-name "projects" dir)))
    (make-directory (expand-file-name ".git" dir))
    (project-remember-project (project-current nil dir))
    (switch-to-buffer (get-buffer-create " *cbt-start*"))
    (setq default-directory temporary-file-directory)
    (execute-kbd-macro (kbd (concat "M-x project-switch-project RET "
                                    (cbt-k dir) " RET a")))
    (let ((buf (current-buffer)))
      (unwind-protect
          (progn
            (should (cbt-chat buf))     ; the buffer shown is the chat
            (should (equal (claude-bridge--chat-cwd (cbt-chat buf)) dir)))
        (cbt-kill buf)))))

;;;; Tool calls and their files

(ert-deftest claude-bridge-test-tool-calls-link-to-their-files-and-next-error-visits-them ()
  (cbt-with-chat (buf dir)
    (let ((file (expand-file-name "notes.txt" dir)))
      (with-temp-file file (insert "first line\nhello world\n"))
      (cbt-send buf "please USE_EDIT")
      (cbt-wait-card buf)
      (cbt-keys buf "C-c C-p a")
      (cbt-wait-turn buf)
      (delete-other-windows)
      (with-current-buffer buf (goto-char (point-min)))
      (cbt-keys buf "M-g n")            ; the Read of notes.txt, beside the chat
      (should (equal (buffer-file-name) file))
      (should (get-buffer-window buf))
      (execute-kbd-macro (kbd "M-g n")) ; from the file: the Edit, at the line it changed
      (should (equal (buffer-file-name) file))
      (should (= (line-number-at-pos) 2))
      (let ((edit (cl-find "Edit" (cbt-items buf 'tool)
                           :key (lambda (i) (claude-bridge-model-get i :name)) :test #'equal)))
        (kill-buffer (get-file-buffer file))
        (delete-other-windows)
        (with-current-buffer buf (goto-char (claude-bridge-item-start edit)))
        (cbt-keys buf "RET")
        (should (equal (buffer-file-name) file))
        (should (= (line-number-at-pos) 2))
        (kill-buffer)))))

(ert-deftest claude-bridge-test-todo-write-is-a-checklist-updated-in-place ()
  (cbt-with-chat (buf dir)
    (ignore dir)
    (cbt-enqueue '(:toolUse (:name "TodoWrite"
                             :input (:todos [(:content "read" :status "in_progress"
                                                       :activeForm "Reading")
                                             (:content "write" :status "pending"
                                                       :activeForm "Writing")])))
                 '(:toolUse (:name "TodoWrite"
                             :input (:todos [(:content "read" :status "completed"
                                                       :activeForm "Reading")
                                             (:content "write" :status "in_progress"
                                                       :activeForm "Writing")])))
                 '(:text "done"))
    (cbt-turn buf "plan it")
    (should (= (length (cbt-items buf 'todo)) 1))
    (should (string-match-p "▾ Plan\n  \\[x\\] read\n  \\[>\\] Writing\n" (cbt-buffer-text buf)))))

;;;; Resume

(ert-deftest claude-bridge-test-resume-lists-newest-first-marks-the-open-one-and-continues ()
  (let* ((dir (cbt-project))
         (first (claude-bridge-chat dir))
         second resumed offered)
    (unwind-protect
        (progn
          (cbt-wait-idle first)
          (cbt-turn first "remember **PINEAPPLE**")
          (cbt-kill first)
          (setq second (claude-bridge-chat dir))
          (cbt-wait-idle second)
          (cbt-turn second "now MANGO")
          (let ((minibuffer-setup-hook
                 (cons (lambda ()
                         (setq offered (completion-all-sorted-completions
                                        (minibuffer-prompt-end) (point-max))))
                       minibuffer-setup-hook)))
            (cbt-keys second "C-c C-r RET"))
          (setq resumed (current-buffer))
          (let ((labels (cl-subseq offered 0 2)))
            (should (string-match-p "now MANGO  (open)\\'" (car labels)))
            (should (string-match-p "[0-9]  remember PINEAPPLE\\'" (cadr labels))))
          (cbt-wait-idle resumed)
          ;; The default was the newest conversation not open: PINEAPPLE, shown again.
          (should (string-match-p "❯ remember \\*\\*PINEAPPLE\\*\\*\n+Echo: remember"
                                  (cbt-buffer-text resumed)))
          (should-not (string-match-p "MANGO" (cbt-buffer-text resumed)))
          (should-not (buffer-live-p second))
          (should (equal (plist-get (cbt-turn resumed "and now?") :text) "Echo: and now?"))
          (should (string-match-p "PINEAPPLE" (json-serialize (plist-get (cbt-last-request)
                                                                         :messages))))
          (cbt-keys resumed "M-p")
          (should (equal (cbt-prompt-text resumed) "and now?"))
          (cbt-keys resumed "M-p")
          (should (equal (cbt-prompt-text resumed) "remember **PINEAPPLE**")))
      (dolist (b (list first second resumed)) (cbt-kill b)))))

(ert-deftest claude-bridge-test-a-resumed-conversation-shows-attachments-with-their-prompt ()
  (cbt-with-chat (buf dir)
    (with-temp-file (expand-file-name "notes.txt" dir) (insert "the notes\n"))
    (cbt-keys buf (concat "C-c C-a " (cbt-k "notes.txt") " RET"))
    (cbt-turn buf "look at this")
    (cbt-keys buf "C-c C-q")
    (cbt-keys buf "C-c C-r RET")
    (let ((resumed (current-buffer)))
      (unwind-protect
          (progn
            (cbt-wait-idle resumed)
            (should (string-match-p "❯ look at this\n  \\+ notes.txt\n" (cbt-buffer-text resumed)))
            (should-not (string-match-p "❯ \\[Attached" (cbt-buffer-text resumed))))
        (cbt-kill resumed)))))

;;;; Failures

(ert-deftest claude-bridge-test-bridge-killed-is-told-once-and-the-next-prompt-continues ()
  (cbt-with-chat (buf dir)
    (ignore dir)
    (let* ((chat (cbt-chat buf))
           (bridge (claude-bridge-client-pid))
           (cli (claude-bridge--chat-pid chat))
           messages)
      (cbt-turn buf "first")
      (setq messages
            (cbt-messages-during
             (lambda ()
               (signal-process bridge 'kill)
               (cbt-wait "the exit report" (lambda () (eq (claude-bridge--chat-state chat) 'exited)))
               (accept-process-output nil 0.2))))
      (cbt-flush buf)
      (with-current-buffer buf
        (should (= (how-many "claude-bridge exited" (point-min) (point-max)) 1)))
      (should (string-match-p "the next prompt continues this conversation" (cbt-buffer-text buf)))
      (should (= (cl-count-if (lambda (m) (string-match-p "claude-bridge exited" m)) messages) 1))
      (cbt-wait "the old CLI's end" (lambda () (not (cbt-alive-p cli))))
      (should (equal (plist-get (cbt-turn buf "second") :text) "Echo: second"))
      (should-not (equal (claude-bridge-client-pid) bridge))
      ;; The new session resumed the conversation: the model saw the first turn too.
      (should (string-match-p "Echo: first" (json-serialize (plist-get (cbt-last-request)
                                                                       :messages)))))))

(ert-deftest claude-bridge-test-cli-crash-offers-one-restart-that-continues-the-conversation ()
  ;; The fake CLI exits with code 3 on "EXIT 3", as no real CLI can be made to.
  (let ((claude-bridge-create-params
         (list :claudePath (or (getenv "CLAUDE_BRIDGE_TEST_FAKE_CLI")
                               (ert-fail "CLAUDE_BRIDGE_TEST_FAKE_CLI is not set")))))
    (cbt-with-chat (buf dir)
      (ignore dir)
      (let* ((chat (cbt-chat buf))
             (pid (claude-bridge--chat-pid chat)))
        (cbt-send buf "EXIT 3")
        (cbt-wait "the crash report" (lambda () (eq (claude-bridge--chat-state chat) 'exited)))
        (cbt-flush buf)
        (should (string-match-p "⚠ Claude failed (code 3)" (cbt-buffer-text buf)))
        (should (string-match-p "\\[Restart\\]" (cbt-buffer-text buf)))
        (with-current-buffer buf (goto-char (point-min)) (search-forward "[Restart"))
        (cbt-keys buf "RET")
        (cbt-wait-idle buf)
        (should-not (string-match-p "\\[Restart\\]" (cbt-buffer-text buf)))
        (should-not (equal (claude-bridge--chat-pid chat) pid))
        (should (equal (plist-get (cbt-turn buf "still with me?") :text)
                       "Echo: still with me?"))))))

(ert-deftest claude-bridge-test-killing-a-working-chat-asks-first ()
  (let* ((buf (claude-bridge-chat (cbt-project)))
         (chat (cbt-chat buf)))
    (unwind-protect
        (progn
          (cbt-wait-idle buf)
          (cbt-enqueue (cbt-slow-text 100))
          (cbt-send buf "talk slowly")
          (cbt-keys buf "C-x k RET no RET")
          (should (buffer-live-p buf))
          (should (eq (claude-bridge--chat-state chat) 'running))
          (should-not (cbt-kill-emacs-query-answer "no"))
          (let ((pid (claude-bridge--chat-pid chat)))
            (cbt-keys buf "C-x k RET yes RET")
            (should-not (buffer-live-p buf))
            (cbt-wait "the CLI's end" (lambda () (not (cbt-alive-p pid))))))
      (cbt-kill buf))))

(defvar cbt--may-quit nil "What the last `cbt-kill-emacs-query-answer' got.")

(defun cbt-kill-emacs-query-answer (answer)
  "Ask `kill-emacs-query-functions' as C-x C-c does, typing ANSWER to its questions.
Return whether Emacs may quit."
  (let ((map (make-sparse-keymap)))
    (define-key map [f12] (lambda () (interactive)
                            (setq cbt--may-quit (run-hook-with-args-until-failure
                                                 'kill-emacs-query-functions))))
    (let ((overriding-terminal-local-map nil))
      (global-set-key [f12] (lookup-key map [f12]))
      (unwind-protect
          (execute-kbd-macro (kbd (concat "<f12> " answer " RET")))
        (global-unset-key [f12])))
    cbt--may-quit))

(ert-deftest claude-bridge-test-killing-the-chat-buffer-closes-its-session ()
  (let* ((buf (claude-bridge-chat (cbt-project)))
         (chat (cbt-chat buf)))
    (cbt-wait-idle buf)
    (let ((id (claude-bridge--chat-id chat))
          (pid (claude-bridge--chat-pid chat)))
      (cbt-keys buf "C-x k RET")
      (should-not (buffer-live-p buf))
      (cbt-wait "the CLI's end" (lambda () (not (cbt-alive-p pid))))
      (cbt-wait "the bridge's report of the closed session"
                (lambda () (equal (plist-get (claude-bridge-client-call-sync
                                              "session/status" (list :sessionId id))
                                             :state)
                                  "exited"))))))

;;;; The warm pool

(ert-deftest claude-bridge-test-a-second-chat-of-a-project-takes-a-warm-process ()
  (claude-bridge-shutdown)               ; the pool is read when the bridge starts
  (let* ((claude-bridge-warm-pool 1)
         (dir (cbt-project))
         (one (claude-bridge-chat dir))
         two)
    (unwind-protect
        (progn
          (cbt-wait-idle one)
          (should-not (claude-bridge--chat-warm (cbt-chat one)))
          (setq two (claude-bridge-chat dir t))
          (cbt-wait-idle two)
          (should (claude-bridge--chat-warm (cbt-chat two))))
      (cbt-kill one)
      (cbt-kill two)
      (claude-bridge-shutdown))))

(provide 'claude-bridge-test)
;;; claude-bridge-test.el ends here
